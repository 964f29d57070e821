def _deprecate_method(*, version, message=""):
    def wrap(f):
        return f
    return wrap
