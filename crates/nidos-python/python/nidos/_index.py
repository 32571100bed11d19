find_datasets=index=None
