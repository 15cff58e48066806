#!/usr/bin/env python3
"""Generates the AMQP 0-9-1 method table and typed methods from the spec.

Input: ../shared/reference/amqp-0-9-1.json (RabbitMQ's machine-readable 0-9-1 spec with its
extensions), relative to the repository root; override with --spec.
Outputs, both committed:
- Sources/AMQP/Generated/AMQPMethods+Generated.swift: the method table (AMQPSpec.classes) and
  the constants; override with the first argument.
- Sources/AMQP/Generated/AMQPMethod+Generated.swift: one struct per method with its arguments
  typed (each a Ranged value with its byte range, or an AMQPBit), the enum AMQPMethod, the
  decoder that reads a method frame's arguments into them, and the same for the content
  properties of basic; override with --typed-output.
The AMQP tests write both to temporary files and compare them with the committed ones byte for
byte. Run from anywhere:
    python3 scripts/gen-amqp-methods.py [--spec spec.json] [output.swift] [--typed-output typed.swift]
"""

import argparse
import json
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_SPEC = os.path.join(ROOT, "..", "shared", "reference", "amqp-0-9-1.json")
OUTPUT = os.path.join(ROOT, "Sources", "AMQP", "Generated", "AMQPMethods+Generated.swift")
TYPED_OUTPUT = os.path.join(ROOT, "Sources", "AMQP", "Generated", "AMQPMethod+Generated.swift")

WIRE_TYPES = {"octet", "short", "long", "longlong", "bit", "shortstr", "longstr", "timestamp", "table"}


def swift_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def camel(name):
    parts = name.replace("_", "-").lower().split("-")
    return parts[0] + "".join(p.capitalize() for p in parts[1:])


def resolve(arg, domains):
    """The wire type of an argument: its own type, or its domain followed to a wire type."""
    if "type" in arg:
        t = arg["type"]
    else:
        t = arg["domain"]
    seen = set()
    while t not in WIRE_TYPES:
        if t in seen or t not in domains:
            raise SystemExit("cannot resolve type %r of argument %r" % (t, arg["name"]))
        seen.add(t)
        t = domains[t]
    return t


def argument_line(arg, domains, indent):
    domain = arg.get("domain")
    return "%sAMQPArgumentSpec(name: %s, type: .%s, domain: %s)," % (
        indent, swift_string(arg["name"]), resolve(arg, domains),
        swift_string(domain) if domain else "nil")


# The Swift type of each wire type's value, and the AMQPArgument case and reader call for it.
SWIFT_TYPES = {
    "octet": "Ranged<UInt8>", "short": "Ranged<UInt16>", "long": "Ranged<UInt32>",
    "longlong": "Ranged<UInt64>", "timestamp": "Ranged<UInt64>", "shortstr": "Ranged<String>",
    "longstr": "Ranged<AMQPLongString>", "bit": "AMQPBit", "table": "Ranged<AMQPFieldTable>",
}
ARGUMENT_CASES = {
    "octet": "octet", "short": "short", "long": "long", "longlong": "longlong",
    "timestamp": "timestamp", "shortstr": "shortString", "longstr": "longString", "bit": "bit",
    "table": "table",
}
# What AMQPMethod's accessor by argument name returns, and how from the struct's member `$0`:
# integers as Int (a longlong or timestamp clamped), as the values by name always gave them.
ACCESSOR_TYPES = {
    "octet": ("Int", "Int($0.value)"), "short": ("Int", "Int($0.value)"), "long": ("Int", "Int($0.value)"),
    "longlong": ("Int", "Int(clamping: $0.value)"), "timestamp": ("Int", "Int(clamping: $0.value)"),
    "shortstr": ("String", "$0.value"), "longstr": ("AMQPLongString", "$0.value"), "bit": ("Bool", "$0.value"),
    "table": ("AMQPFieldTable", "$0.value"),
}
SWIFT_KEYWORDS = {"internal", "public", "private", "class", "struct", "enum", "protocol", "func",
                  "var", "let", "import", "return", "default", "case", "in", "is", "as", "self",
                  "Type", "init", "where", "while", "for", "if", "else", "switch", "repeat",
                  "operator", "static", "extension", "subscript", "throws", "rethrows", "defer"}


def title_case(name):
    """As AMQPSpec.titleCase: `routing-key` -> `Routing-Key` (the labels problems name)."""
    out, upper = [], True
    for c in name:
        out.append(c.upper() if upper else c)
        upper = c == "-"
    return "".join(out)


def pascal(name):
    """`start-ok` -> `StartOK`, `get-empty` -> `GetEmpty`, `recover-async` -> `RecoverAsync`."""
    parts = name.split("-")
    return "".join("OK" if p == "ok" else "ID" if p == "id" else p.capitalize() for p in parts)


def member(name):
    """`routing-key` -> `routingKey`, `class-id` -> `classID`, `reserved-1` -> `reserved1`."""
    parts = name.split("-")
    word = parts[0] + "".join("ID" if p == "id" else "OK" if p == "ok" else p.capitalize() for p in parts[1:])
    return word


def declared(word):
    """A member name as a declaration: keywords (`internal`) in backticks."""
    return "`%s`" % word if word in SWIFT_KEYWORDS else word


def read_call(arg, wire):
    if wire == "longstr":
        return "r.longString(%s)" % swift_string(arg["name"])
    if wire == "table":
        return "r.table(%s)" % swift_string(title_case(arg["name"]))
    return "r.%s()" % {"octet": "octet", "short": "short", "long": "long", "longlong": "longlong",
                       "timestamp": "timestamp", "shortstr": "shortString", "bit": "bit"}[wire]


def generated_header(spec):
    """The lines that open every generated file: what made it and how to make it again."""
    return [
        "// GENERATED FILE - DO NOT EDIT.",
        "// Generated by scripts/gen-amqp-methods.py from ../shared/reference/amqp-0-9-1.json",
        "// (AMQP %d-%d-%d with RabbitMQ's extensions). Regenerate with:" % (
            spec["major-version"], spec["minor-version"], spec["revision"]),
        "//     python3 scripts/gen-amqp-methods.py",
        "",
    ]


def typed_file(spec, domains):
    out = []
    w = out.append
    out += generated_header(spec)
    w("import Dissection")
    w("")
    methods = []
    for cls in spec["classes"]:
        for m in cls["methods"]:
            methods.append((cls, m, "AMQP" + pascal(cls["name"]) + pascal(m["name"]),
                            member(cls["name"]) + pascal(m["name"])))

    w("/// A method frame's method (AMQP 0-9-1 §4.2.4): one case per method of the spec, its")
    w("/// arguments typed, each with its byte range (offsets from the frame's first byte). A method")
    w("/// the spec does not define is `unknown`, its ids and argument bytes kept.")
    w("///")
    w("/// Indirect: each case is one reference, so a method is cheap to copy whatever its arguments.")
    w("public indirect enum AMQPMethod: Sendable, Equatable {")
    for cls, m, struct, case in methods:
        w("    /// %s.%s (%d, %d)." % (cls["name"], m["name"], cls["id"], m["id"]))
        w("    case %s(%s)" % (case, struct))
    w("    /// Ids the spec does not define: the bytes after them, undecoded.")
    w("    case unknown(classID: UInt16, methodID: UInt16, arguments: Ranged<ArraySlice<UInt8>>)")
    w("}")
    w("")
    w("extension AMQPMethod {")
    w("    /// The class and method ids.")
    w("    public var id: AMQPMethodID {")
    w("        switch self {")
    for cls, m, struct, case in methods:
        w("        case .%s: return AMQPMethodID(classID: %d, methodID: %d)" % (case, cls["id"], m["id"]))
    w("        case .unknown(let classID, let methodID, _): return AMQPMethodID(classID: classID, methodID: methodID)")
    w("        }")
    w("    }")
    w("")
    w("    /// The arguments read, in wire order: all of the method's, or those before the frame ended")
    w("    /// (none for an unknown method).")
    w("    public var argumentList: [AMQPArgument] {")
    w("        switch self {")
    for cls, m, struct, case in methods:
        if m["arguments"]:
            w("        case .%s(let m): return m.argumentList" % case)
        else:
            w("        case .%s: return []" % case)
    w("        case .unknown: return []")
    w("        }")
    w("    }")
    w("")
    # One accessor per argument name, across the methods that have it: what the connection's
    # state reads (a delivery's tag, a publish's exchange), typed, with no list of values made.
    by_name = {}
    for cls, m, struct, case in methods:
        for a in m["arguments"]:
            wire = resolve(a, domains)
            entry = by_name.setdefault(a["name"], (wire, []))
            if entry[0] != wire:
                raise SystemExit("argument %r is %s in one method and %s in another" % (a["name"], entry[0], wire))
            entry[1].append((cls, m, case))
    for name in sorted(by_name):
        wire, users = by_name[name]
        swift_type, convert = ACCESSOR_TYPES[wire]
        word = member(name)
        if word in ("id", "argumentList"):
            raise SystemExit("argument %r would hide AMQPMethod.%s" % (name, word))
        listed = ", ".join("%s.%s" % (c["name"], m["name"]) for c, m, _ in users)
        w("    /// `%s` (%s) of %s; nil for another method, or when the frame ended before it." % (name, wire, listed))
        w("    package var %s: %s? {" % (declared(word), swift_type))
        w("        switch self {")
        for cls, m, case in users:
            w("        case .%s(let m): return m.%s.map { %s }" % (case, declared(word), convert))
        w("        default: return nil")
        w("        }")
        w("    }")
        w("")
    w("    /// Reads the arguments of the method `id` from `r`, as far as the bytes go; nil when the")
    w("    /// spec defines no such method. `r.count` says how many arguments were read.")
    w("    static func decodeArguments(_ id: AMQPMethodID, _ r: inout AMQPArgumentReader) -> AMQPMethod? {")
    w("        switch (id.classID, id.methodID) {")
    for cls, m, struct, case in methods:
        w("        case (%d, %d): return .%s(%s.decode(&r))" % (cls["id"], m["id"], case, struct))
    w("        default: return nil")
    w("        }")
    w("    }")
    w("}")
    for cls, m, struct, case in methods:
        w("")
        args = m["arguments"]
        w("/// %s.%s (class %d, method %d)%s: the arguments as read, each nil when the frame ended" % (
            cls["name"], m["name"], cls["id"], m["id"], ", followed by content" if m.get("content") else ""))
        w("/// before it.")
        w("public struct %s: Sendable, Equatable {" % struct)
        for a in args:
            wire = resolve(a, domains)
            w("    /// `%s` (%s%s)." % (a["name"], wire, ", domain " + a["domain"] if a.get("domain") else ""))
            w("    public var %s: %s?" % (declared(member(a["name"])), SWIFT_TYPES[wire]))
        if args:
            w("")
        w("    public init() {}")
        if args:
            w("")
            w("    /// The arguments read, in wire order (not named `arguments`: several methods have an")
            w("    /// argument of that name).")
            w("    public var argumentList: [AMQPArgument] {")
            w("        var out: [AMQPArgument] = []")
            w("        out.reserveCapacity(%d)" % len(args))
            for a in args:
                wire = resolve(a, domains)
                w("        guard let %s else { return out }" % declared(member(a["name"])))
                w("        out.append(.%s(%s))" % (ARGUMENT_CASES[wire], declared(member(a["name"]))))
            w("        return out")
            w("    }")
        w("")
        w("    static func decode(_ r: inout AMQPArgumentReader) -> %s {" % struct)
        if args:
            w("        var m = %s()" % struct)
            for a in args:
                wire = resolve(a, domains)
                name = member(a["name"])
                w("        guard let %s = %s else { return m }" % (declared(name), read_call(a, wire)))
                w("        m.%s = %s" % (declared(name), declared(name)))
            w("        return m")
        else:
            w("        %s()" % struct)
        w("    }")
        w("}")
    # Content properties: only basic defines any (the content header decoder relies on it).
    with_props = [c for c in spec["classes"] if c.get("properties")]
    if [c["name"] for c in with_props] != ["basic"]:
        raise SystemExit("only basic may define content properties, not %r" % [c["name"] for c in with_props])
    cls = with_props[0]
    props = cls["properties"]
    w("")
    w("/// The content properties of a basic content header (AMQP 0-9-1 §4.2.6.1): each present when")
    w("/// its property flag is set and the frame reached it, nil otherwise.")
    w("public struct AMQPBasicProperties: Sendable, Equatable {")
    for p in props:
        wire = resolve(p, domains)
        w("    /// `%s` (%s), property flag %d." % (p["name"], wire, props.index(p) + 1))
        w("    public var %s: %s?" % (declared(member(p["name"])), SWIFT_TYPES[wire]))
    w("")
    w("    public init() {}")
    w("")
    w("    /// The property at `index` of the class's properties (the flag's position), if present.")
    w("    public func property(at index: Int) -> AMQPArgument? {")
    w("        switch index {")
    for i, p in enumerate(props):
        wire = resolve(p, domains)
        w("        case %d: return %s.map { .%s($0) }" % (i, declared(member(p["name"])), ARGUMENT_CASES[wire]))
    w("        default: return nil")
    w("        }")
    w("    }")
    w("")
    w("    /// Reads the properties `flags` says are present, in order, as far as the bytes go, into `p`")
    w("    /// (in place: the header that holds them is not copied). `r.count` says how many were read.")
    w("    static func decode(_ r: inout AMQPArgumentReader, flags: AMQPPropertyFlags, into p: inout AMQPBasicProperties) {")
    for i, prop in enumerate(props):
        wire = resolve(prop, domains)
        name = member(prop["name"])
        w("        if flags.isSet(%d) {" % i)
        w("            guard let %s = %s else { return }" % (declared(name), read_call(prop, wire)))
        w("            p.%s = %s" % (declared(name), declared(name)))
        w("        }")
    w("    }")
    w("}")
    w("")
    return out


def write(path, out):
    output = os.path.abspath(path)
    os.makedirs(os.path.dirname(output), exist_ok=True)
    # newline="" so the bytes are the same on every platform: the test compares them exactly.
    with open(output, "w", encoding="utf-8", newline="") as f:
        f.write("\n".join(out))
    return output


def main():
    parser = argparse.ArgumentParser(description="Generates the AMQP 0-9-1 method table in Swift.")
    parser.add_argument("output", nargs="?", default=OUTPUT,
                        help="where to write the Swift file (default: %(default)s)")
    parser.add_argument("--spec", default=DEFAULT_SPEC,
                        help="the machine-readable spec to read (default: %(default)s)")
    parser.add_argument("--typed-output", default=TYPED_OUTPUT,
                        help="where to write the typed methods (default: %(default)s)")
    args = parser.parse_args()
    with open(args.spec) as f:
        spec = json.load(f)
    domains = {name: wire for name, wire in spec["domains"]}

    out = []
    w = out.append
    out += generated_header(spec)
    w("extension AMQPSpec {")
    w("    /// Protocol version the table describes.")
    w("    public static let version = (major: UInt8(%d), minor: UInt8(%d), revision: UInt8(%d))" % (
        spec["major-version"], spec["minor-version"], spec["revision"]))
    w("    /// IANA port of the protocol.")
    w("    public static let defaultPort: UInt16 = %d" % spec["port"])
    w("")
    w("    /// Every class of the protocol, in spec order, with its methods and content properties.")
    w("    public static let classes: [AMQPClassSpec] = [")
    for cls in spec["classes"]:
        w("        AMQPClassSpec(")
        w("            id: %d, name: %s," % (cls["id"], swift_string(cls["name"])))
        w("            methods: [")
        for m in cls["methods"]:
            w("                AMQPMethodSpec(")
            w("                    classID: %d, methodID: %d, className: %s, methodName: %s," % (
                cls["id"], m["id"], swift_string(cls["name"]), swift_string(m["name"])))
            w("                    carriesContent: %s, isSynchronous: %s," % (
                "true" if m.get("content") else "false", "true" if m.get("synchronous") else "false"))
            if m["arguments"]:
                w("                    arguments: [")
                for a in m["arguments"]:
                    w(argument_line(a, domains, "                        "))
                w("                    ]),")
            else:
                w("                    arguments: []),")
        w("            ],")
        props = cls.get("properties") or []
        if props:
            w("            properties: [")
            for p in props:
                w(argument_line(p, domains, "                "))
            w("            ]),")
        else:
            w("            properties: []),")
    w("    ]")
    w("")
    w("    /// The spec's constants: frame types, sizes, the frame-end octet and reply codes.")
    w("    public static let constants: [AMQPConstant] = [")
    for c in spec["constants"]:
        cls = c.get("class")
        w("        AMQPConstant(name: %s, value: %d, errorClass: %s)," % (
            swift_string(c["name"]), c["value"], ("." + camel(cls)) if cls else "nil"))
    w("    ]")
    w("")
    const = {c["name"]: c["value"] for c in spec["constants"]}
    w("    /// AMQP 0-9-1 §4.2.3: every frame ends with this octet.")
    w("    public static let frameEnd: UInt8 = %d" % const["FRAME-END"])
    w("    /// Frames of up to this size must be accepted before frame-max is negotiated.")
    w("    public static let frameMinSize = %d" % const["FRAME-MIN-SIZE"])
    w("}")
    w("")
    w("extension AMQPFrameType {")
    for c in spec["constants"]:
        if c["name"].startswith("FRAME-") and c["name"] not in ("FRAME-MIN-SIZE", "FRAME-END", "FRAME-ERROR"):
            w("    public static let %s = AMQPFrameType(rawValue: %d)" % (camel(c["name"][6:]), c["value"]))
    w("}")
    w("")
    w("extension AMQPReplyCode {")
    codes = [c for c in spec["constants"] if c.get("class") or c["name"] == "REPLY-SUCCESS"]
    for c in codes:
        name = c["name"][6:] if c["name"] == "REPLY-SUCCESS" else c["name"]
        w("    public static let %s = AMQPReplyCode(rawValue: %d)" % (camel(name), c["value"]))
    w("")
    w("    /// Names as RabbitMQ writes them in reply texts (`PRECONDITION_FAILED`).")
    w("    static let names: [UInt16: String] = [")
    for c in codes:
        w("        %d: %s," % (c["value"], swift_string(c["name"].replace("-", "_"))))
    w("    ]")
    w("}")
    w("")

    output = write(args.output, out)
    typed = write(args.typed_output, typed_file(spec, domains))
    print("wrote %s (%d classes, %d methods) and %s" % (
        os.path.relpath(output, ROOT), len(spec["classes"]),
        sum(len(c["methods"]) for c in spec["classes"]), os.path.relpath(typed, ROOT)))


if __name__ == "__main__":
    main()
