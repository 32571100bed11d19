Report=validate=None
