"""inspect.signature for the bound functions: an inspect.Signature read from nanobind's
__nb_signature__ (the text nanobind renders for each function, with its default values).

Installed once at import as a __signature__ property of nanobind's function types (see
tessera/__init__.py); computed only when asked for, so calls pay nothing.
"""
import ast
import inspect
import re

# nanobind writes a default value as a placeholder, `\3` or `\=3` (the 4th value of the defaults tuple).
_DEFAULT = re.compile(r"\\=?(\d+)")
_UNKNOWN = inspect.Signature([
    inspect.Parameter("args", inspect.Parameter.VAR_POSITIONAL),
    inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD),
])


def _parameters(arguments, defaults):
    """inspect.Parameters for an ast.arguments whose defaults are `__nb_default_<i>` names."""

    def default_of(node):
        if node is None:
            return inspect.Parameter.empty
        index = int(node.id[len("__nb_default_"):])
        return defaults[index]

    def annotation_of(arg):
        return ast.unparse(arg.annotation) if arg.annotation is not None else inspect.Parameter.empty

    params = []
    positional = arguments.posonlyargs + arguments.args
    padded = [None] * (len(positional) - len(arguments.defaults)) + list(arguments.defaults)
    for i, (arg, default) in enumerate(zip(positional, padded)):
        kind = inspect.Parameter.POSITIONAL_ONLY if i < len(arguments.posonlyargs) else (
            inspect.Parameter.POSITIONAL_OR_KEYWORD)
        params.append(inspect.Parameter(arg.arg, kind, default=default_of(default), annotation=annotation_of(arg)))
    if arguments.vararg is not None:
        params.append(inspect.Parameter(arguments.vararg.arg, inspect.Parameter.VAR_POSITIONAL,
                                        annotation=annotation_of(arguments.vararg)))
    for arg, default in zip(arguments.kwonlyargs, arguments.kw_defaults):
        params.append(inspect.Parameter(arg.arg, inspect.Parameter.KEYWORD_ONLY, default=default_of(default),
                                        annotation=annotation_of(arg)))
    if arguments.kwarg is not None:
        params.append(inspect.Parameter(arguments.kwarg.arg, inspect.Parameter.VAR_KEYWORD,
                                        annotation=annotation_of(arguments.kwarg)))
    return params


def signature_of_function(func):
    """The inspect.Signature of a nanobind function (its first overload's, when it has several)."""
    text, _doc, defaults = func.__nb_signature__[0]
    source = _DEFAULT.sub(r"__nb_default_\1", text)
    try:
        definition = ast.parse(source + ": pass").body[0]
    except SyntaxError:
        # A type nanobind could only name in C++ (not bound to Python) makes the text unparsable:
        # the parameters are then unknown, but inspect.signature still answers.
        return _UNKNOWN
    returns = ast.unparse(definition.returns) if definition.returns is not None else inspect.Signature.empty
    return inspect.Signature(_parameters(definition.args, defaults or ()), return_annotation=returns)


def signature_of_bound_method(method):
    """A bound method's signature: its function's, less `self`."""
    signature = signature_of_function(method.__func__)
    if signature is _UNKNOWN:
        return signature
    return signature.replace(parameters=list(signature.parameters.values())[1:])
