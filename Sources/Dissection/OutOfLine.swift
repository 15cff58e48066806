/// A value kept out of line: in a box shared by the copies of what holds it, never changed in
/// place (a change makes a new box, so the copies that share the old one never see it). For the
/// parts few values have (an analysis note's rare findings, a consumer that ended), so that the
/// values made and copied for every PDU stay small: an empty one is a single nil word.
public struct OutOfLine<Value> {
    @usableFromInline final class Box {
        @usableFromInline let value: Value
        @inlinable init(_ value: Value) { self.value = value }
    }

    @usableFromInline var box: Box?

    @inlinable public init() {}

    /// The value; nil until one is set.
    @inlinable public var value: Value? { box?.value }

    /// Sets the value (nil: none), in a new box.
    @inlinable public mutating func set(_ value: Value?) {
        box = value.map(Box.init)
    }

    /// Changes the value, starting from `initial` when there is none yet, into a new box.
    @inlinable public mutating func change(from initial: @autoclosure () -> Value, _ body: (inout Value) -> Void) {
        var value = box?.value ?? initial()
        body(&value)
        box = Box(value)
    }
}

extension OutOfLine.Box: Sendable where Value: Sendable {}
extension OutOfLine: Sendable where Value: Sendable {}

extension OutOfLine: Equatable where Value: Equatable {
    @inlinable public static func == (a: OutOfLine, b: OutOfLine) -> Bool { a.value == b.value }
}
