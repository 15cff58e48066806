/// A value read off the wire with the bytes it came from: offsets from the PDU's first byte.
public struct Ranged<Value: Sendable>: Sendable {
    public var value: Value
    public var range: Range<Int>

    @inlinable
    public init(_ value: Value, _ range: Range<Int>) {
        self.value = value
        self.range = range
    }
}

extension Ranged: Equatable where Value: Equatable {}
