"""The checked AST cel-expr-python serializes (a cel.expr.CheckedExpr in a protobuf Any), decoded with message types
built at run time from cel-spec's cel/expr/syntax.proto and checked.proto (google/cel-spec@v0.24.0): the package
ships no Python classes for them."""

from __future__ import annotations

from typing import Any

from google.protobuf import any_pb2, descriptor_pb2, descriptor_pool, message_factory

_F = descriptor_pb2.FieldDescriptorProto


def _checked_expr_class() -> Any:
    pool = descriptor_pool.DescriptorPool()
    for module in ("struct_pb2", "empty_pb2"):
        imported = __import__(f"google.protobuf.{module}", fromlist=["DESCRIPTOR"])
        proto = descriptor_pb2.FileDescriptorProto()
        imported.DESCRIPTOR.CopyToProto(proto)
        pool.Add(proto)
    file = descriptor_pb2.FileDescriptorProto(name="gpu_dra/cel_expr.proto", package="cel.expr", syntax="proto3",
                                              dependency=["google/protobuf/struct.proto",
                                                          "google/protobuf/empty.proto"])

    _add_expr(file)
    _add_type(file)
    _add_checked(file)
    pool.Add(file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("cel.expr.CheckedExpr"))


_EXPR, _TYPE = ".cel.expr.Expr", ".cel.expr.Type"


def _add(message: Any, name: str, number: int, kind: int, type_name: str | None = None,
         repeated: bool = False, oneof: int | None = None) -> None:
    field = message.field.add(name=name, number=number, type=kind,
                              label=_F.LABEL_REPEATED if repeated else _F.LABEL_OPTIONAL)
    if type_name:
        field.type_name = type_name
    if oneof is not None:
        field.oneof_index = oneof


def _add_expr(file: Any) -> None:
    """cel/expr/syntax.proto: Constant and Expr."""
    add, expr_t = _add, _EXPR
    constant = file.message_type.add(name="Constant")
    constant.oneof_decl.add(name="kind")
    add(constant, "null_value", 1, _F.TYPE_ENUM, ".google.protobuf.NullValue", oneof=0)
    for number, (name, kind) in enumerate((("bool_value", _F.TYPE_BOOL), ("int64_value", _F.TYPE_INT64),
                                           ("uint64_value", _F.TYPE_UINT64), ("double_value", _F.TYPE_DOUBLE),
                                           ("string_value", _F.TYPE_STRING), ("bytes_value", _F.TYPE_BYTES)), 2):
        add(constant, name, number, kind, oneof=0)
    expr = file.message_type.add(name="Expr")
    expr.oneof_decl.add(name="kind")
    add(expr, "id", 2, _F.TYPE_INT64)
    for number, (name, type_name) in enumerate((
            ("const_expr", ".cel.expr.Constant"), ("ident_expr", ".cel.expr.Expr.Ident"),
            ("select_expr", ".cel.expr.Expr.Select"), ("call_expr", ".cel.expr.Expr.Call"),
            ("list_expr", ".cel.expr.Expr.CreateList"), ("struct_expr", ".cel.expr.Expr.CreateStruct"),
            ("comprehension_expr", ".cel.expr.Expr.Comprehension")), 3):
        add(expr, name, number, _F.TYPE_MESSAGE, type_name, oneof=0)
    ident = expr.nested_type.add(name="Ident")
    add(ident, "name", 1, _F.TYPE_STRING)
    select = expr.nested_type.add(name="Select")
    add(select, "operand", 1, _F.TYPE_MESSAGE, expr_t)
    add(select, "field", 2, _F.TYPE_STRING)
    add(select, "test_only", 3, _F.TYPE_BOOL)
    call = expr.nested_type.add(name="Call")
    add(call, "target", 1, _F.TYPE_MESSAGE, expr_t)
    add(call, "function", 2, _F.TYPE_STRING)
    add(call, "args", 3, _F.TYPE_MESSAGE, expr_t, repeated=True)
    create_list = expr.nested_type.add(name="CreateList")
    add(create_list, "elements", 1, _F.TYPE_MESSAGE, expr_t, repeated=True)
    create_struct = expr.nested_type.add(name="CreateStruct")
    add(create_struct, "message_name", 1, _F.TYPE_STRING)
    add(create_struct, "entries", 2, _F.TYPE_MESSAGE, ".cel.expr.Expr.CreateStruct.Entry", repeated=True)
    entry = create_struct.nested_type.add(name="Entry")
    entry.oneof_decl.add(name="key_kind")
    add(entry, "id", 1, _F.TYPE_INT64)
    add(entry, "field_key", 2, _F.TYPE_STRING, oneof=0)
    add(entry, "map_key", 3, _F.TYPE_MESSAGE, expr_t, oneof=0)
    add(entry, "value", 4, _F.TYPE_MESSAGE, expr_t)
    comprehension = expr.nested_type.add(name="Comprehension")
    for name, number in (("iter_var", 1), ("accu_var", 3), ("iter_var2", 8)):
        add(comprehension, name, number, _F.TYPE_STRING)
    for name, number in (("iter_range", 2), ("accu_init", 4), ("loop_condition", 5), ("loop_step", 6),
                         ("result", 7)):
        add(comprehension, name, number, _F.TYPE_MESSAGE, expr_t)


def _add_type(file: Any) -> None:
    """cel/expr/checked.proto: Type."""
    add, type_t = _add, _TYPE
    type_ = file.message_type.add(name="Type")
    type_.oneof_decl.add(name="type_kind")
    add(type_, "dyn", 1, _F.TYPE_MESSAGE, ".google.protobuf.Empty", oneof=0)
    add(type_, "null", 2, _F.TYPE_ENUM, ".google.protobuf.NullValue", oneof=0)
    for name, number in (("primitive", 3), ("wrapper", 4), ("well_known", 5)):
        add(type_, name, number, _F.TYPE_INT32, oneof=0)
    list_type = type_.nested_type.add(name="ListType")
    add(list_type, "elem_type", 1, _F.TYPE_MESSAGE, type_t)
    map_type = type_.nested_type.add(name="MapType")
    add(map_type, "key_type", 1, _F.TYPE_MESSAGE, type_t)
    add(map_type, "value_type", 2, _F.TYPE_MESSAGE, type_t)
    add(type_, "list_type", 6, _F.TYPE_MESSAGE, ".cel.expr.Type.ListType", oneof=0)
    add(type_, "map_type", 7, _F.TYPE_MESSAGE, ".cel.expr.Type.MapType", oneof=0)
    add(type_, "message_type", 9, _F.TYPE_STRING, oneof=0)
    add(type_, "type_param", 10, _F.TYPE_STRING, oneof=0)
    add(type_, "type", 11, _F.TYPE_MESSAGE, type_t, oneof=0)
    add(type_, "error", 12, _F.TYPE_MESSAGE, ".google.protobuf.Empty", oneof=0)
    abstract = type_.nested_type.add(name="AbstractType")
    add(abstract, "name", 1, _F.TYPE_STRING)
    add(abstract, "parameter_types", 2, _F.TYPE_MESSAGE, type_t, repeated=True)
    add(type_, "abstract_type", 14, _F.TYPE_MESSAGE, ".cel.expr.Type.AbstractType", oneof=0)


def _add_checked(file: Any) -> None:
    """cel/expr/checked.proto: Reference and CheckedExpr."""
    add, expr_t, type_t = _add, _EXPR, _TYPE
    reference = file.message_type.add(name="Reference")
    add(reference, "name", 1, _F.TYPE_STRING)
    add(reference, "overload_id", 3, _F.TYPE_STRING, repeated=True)
    checked = file.message_type.add(name="CheckedExpr")
    for name, number, value_type in (("reference_map", 2, ".cel.expr.Reference"), ("type_map", 3, type_t)):
        entry_type = checked.nested_type.add(name="".join(p.title() for p in name.split("_")) + "Entry")
        entry_type.options.map_entry = True
        add(entry_type, "key", 1, _F.TYPE_INT64)
        add(entry_type, "value", 2, _F.TYPE_MESSAGE, value_type)
        add(checked, name, number, _F.TYPE_MESSAGE, f".cel.expr.CheckedExpr.{entry_type.name}", repeated=True)
    add(checked, "expr", 4, _F.TYPE_MESSAGE, expr_t)


CheckedExpr = _checked_expr_class()


def decode(serialized: bytes) -> Any:
    wrapper = any_pb2.Any()
    wrapper.ParseFromString(serialized)
    checked = CheckedExpr()
    checked.ParseFromString(wrapper.value)
    return checked
