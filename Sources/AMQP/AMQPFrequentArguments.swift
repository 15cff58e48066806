import Dissection

/// The arguments of a basic.publish or basic.deliver as the counted path reads them (the
/// table's `PDUDetail.facts`): typed, without an `AMQPArgumentValues` list (an array of entries
/// made, kept and destroyed per message). `values(of:)` makes that list, the same as the
/// frequent-method reader makes, for what asks for it: a message cut short, a close explanation.
enum AMQPFrequentArguments {
    /// basic.publish: reserved-1, exchange, routing-key, mandatory, immediate.
    case publish(reserved: Int, exchange: String, routingKey: String, mandatory: Bool, immediate: Bool)
    /// basic.deliver: consumer-tag, delivery-tag, redelivered, exchange, routing-key.
    case deliver(consumerTag: String, deliveryTag: Int, redelivered: Bool, exchange: String, routingKey: String)

    var id: AMQPMethodID {
        switch self {
        case .publish: return .basicPublish
        case .deliver: return .basicDeliver
        }
    }

    /// The value of the argument at `index` of the method's spec (in wire order).
    func value(at index: Int) -> AMQPArgumentValue? {
        switch (self, index) {
        case (.publish(let reserved, _, _, _, _), 0): return .int(reserved)
        case (.publish(_, let exchange, _, _, _), 1): return .string(exchange)
        case (.publish(_, _, let key, _, _), 2): return .string(key)
        case (.publish(_, _, _, let mandatory, _), 3): return .bool(mandatory)
        case (.publish(_, _, _, _, let immediate), 4): return .bool(immediate)
        case (.deliver(let tag, _, _, _, _), 0): return .string(tag)
        case (.deliver(_, let deliveryTag, _, _, _), 1): return .int(deliveryTag)
        case (.deliver(_, _, let redelivered, _, _), 2): return .bool(redelivered)
        case (.deliver(_, _, _, let exchange, _), 3): return .string(exchange)
        case (.deliver(_, _, _, _, let key), 4): return .string(key)
        default: return nil
        }
    }

    /// The argument list of `spec` (this method's) with these values.
    func values(of spec: AMQPMethodSpec) -> AMQPArgumentValues {
        var values = AMQPArgumentValues()
        values.reserve(spec.arguments.count)
        for (index, argument) in spec.arguments.enumerated() {
            guard let value = value(at: index) else { break }
            values.append(argument, value)
        }
        return values
    }
}

extension AMQPFrameDecoder {
    /// A basic.publish or basic.deliver payload that `frequentMethod(_:strings:)` would read
    /// without a problem (nothing short, nothing left over, reserved bits clear), read into its
    /// typed arguments, the short strings taken from `strings` as that reader takes them; nil
    /// for any other payload.
    @inline(__always)
    static func frequentArguments(_ payload: ArraySlice<UInt8>, strings: inout RecentStrings) -> AMQPFrequentArguments? {
        // Read over the payload's memory: a reader's slices retained and released its array per string.
        payload.withUnsafeBufferPointer { p -> AMQPFrequentArguments? in
            let n = p.count
            guard n >= 4, p[0] == 0, p[1] == 60, p[2] == 0 else { return nil }
            var at = 4
            func shortString(_ strings: inout RecentStrings) -> String? {
                guard at < n else { return nil }
                let length = Int(p[at])
                guard at + 1 + length <= n else { return nil }
                let bytes = UnsafeBufferPointer(rebasing: p[(at + 1)..<(at + 1 + length)])
                at += 1 + length
                return strings.string(bytes) { _ in AMQPText.shortString(ArraySlice(bytes)) }
            }
            switch p[3] {
            case 40:
                // AMQP 0-9-1 §4.2.5.2: mandatory and immediate share an octet; its other bits are reserved.
                guard n >= 6 else { return nil }
                let reserved = Int(p[4]) << 8 | Int(p[5])
                at = 6
                guard let exchange = shortString(&strings), let key = shortString(&strings), at + 1 == n, p[at] >> 2 == 0 else { return nil }
                return .publish(reserved: reserved, exchange: exchange, routingKey: key,
                                mandatory: p[at] & 1 == 1, immediate: p[at] & 2 == 2)
            case 60:
                guard let tag = shortString(&strings), at + 9 <= n, p[at + 8] >> 1 == 0 else { return nil }
                var deliveryTag: UInt64 = 0
                for i in at..<(at + 8) { deliveryTag = deliveryTag << 8 | UInt64(p[i]) }
                let redelivered = p[at + 8] == 1
                at += 9
                guard let exchange = shortString(&strings), let key = shortString(&strings), at == n else { return nil }
                return .deliver(consumerTag: tag, deliveryTag: Int(clamping: deliveryTag), redelivered: redelivered,
                                exchange: exchange, routingKey: key)
            default:
                return nil
            }
        }
    }
}
