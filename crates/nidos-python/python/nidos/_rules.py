context=eval=None
