import Dissection

/// A decoded argument or property value, kept for summaries and connection state.
///
/// The bulky cases are boxed (`indirect`): a field table inline made every value, and every
/// argument holding one, as large as a field, copied through the runtime's value witnesses
/// (about 100 instructions a copy) each time a method's arguments were read in a loop.
package enum AMQPArgumentValue: Equatable {
    case int(Int)
    case bool(Bool)
    case string(String)
    /// A long string: its bytes (held, possibly cut) and declared length.
    indirect case longString(ArraySlice<UInt8>, length: Int)
    /// A field table, as decoded.
    indirect case table(AMQPFieldTable)
}

extension AMQPArgumentValue {
    /// The value of a typed argument: integers as `Int` (a longlong or timestamp clamped).
    package init(_ argument: AMQPArgument) {
        switch argument {
        case .octet(let v): self = .int(Int(v.value))
        case .short(let v): self = .int(Int(v.value))
        case .long(let v): self = .int(Int(v.value))
        case .longlong(let v): self = .int(Int(clamping: v.value))
        case .timestamp(let v): self = .int(Int(clamping: v.value))
        case .shortString(let v): self = .string(v.value)
        case .longString(let v): self = .longString(v.value.bytes, length: v.value.declaredLength)
        case .bit(let v): self = .bool(v.value)
        case .table(let v): self = .table(v.value)
        }
    }

    /// The text of a short or long string (a long one as a short string's text); nil otherwise.
    package var stringValue: String? {
        switch self {
        case .string(let s): return s
        case .longString(let bytes, _): return AMQPText.shortString(bytes)
        default: return nil
        }
    }
}

/// Decoded values by spec name, in wire order.
package struct AMQPArgumentValues {
    package init() {}

    /// The values of a typed method's arguments, by name: what a message's view reads (the
    /// connection's state reads the typed method itself). None for a method the spec does not define.
    package init(of method: AMQPMethod) {
        guard let spec = method.id.spec else {
            self.init()
            return
        }
        self.init(method.argumentList, of: spec)
    }

    /// The values of typed arguments (`AMQPMethod.argumentList`), of `spec`'s arguments in order.
    package init(_ arguments: [AMQPArgument], of spec: AMQPMethodSpec) {
        entries.reserveCapacity(arguments.count)
        for (i, argument) in arguments.enumerated() {
            entries.append(Entry(spec: spec.arguments[i], value: AMQPArgumentValue(argument)))
        }
    }

    /// One argument and its value. A struct, not a `(spec, value)` tuple: an array of tuples
    /// copies each element it hands out through the runtime's generic tuple copy (about 230
    /// instructions), a struct through its own specialized copy.
    package struct Entry {
        package let spec: AMQPArgumentSpec
        package let value: AMQPArgumentValue
    }

    package private(set) var entries: [Entry] = []

    package subscript(name: String) -> AMQPArgumentValue? {
        entries.first { $0.spec.name == name }?.value
    }

    package func int(_ name: String) -> Int? {
        if case .int(let v)? = self[name] { return v }
        return nil
    }

    package func bool(_ name: String) -> Bool? {
        if case .bool(let v)? = self[name] { return v }
        return nil
    }

    package func string(_ name: String) -> String? {
        self[name]?.stringValue
    }
}
