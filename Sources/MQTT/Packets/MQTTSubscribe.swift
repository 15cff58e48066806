import Dissection

/// SUBSCRIBE (MQTT 5.0 §3.8, 3.1.1 §3.8).
public struct MQTTSubscribe: Sendable {
    public var packetID: Ranged<Int>?
    public var properties: MQTTProperties?
    /// Nil when the packet carries no filter (a problem) or the bytes did not reach them.
    public var subscriptions: MQTTList<MQTTSubscription>?

    public init() {}
}

/// One topic filter of a SUBSCRIBE with its options byte.
public struct MQTTSubscription: Sendable {
    public var filter: Ranged<String>
    public var options: Ranged<UInt8>
    /// From the filter's first byte to the options' last.
    public var range: Range<Int> { filter.range.lowerBound..<options.range.upperBound }
    /// The maximum QoS requested.
    public var qos: Int { Int(options.value & 0b11) }
    /// 5.0 subscription options (§3.8.3.1).
    public var noLocal: Bool { options.value & 0x04 != 0 }
    public var retainAsPublished: Bool { options.value & 0x08 != 0 }
    public var retainHandling: Int { Int((options.value >> 4) & 0b11) }
}

/// UNSUBSCRIBE (MQTT 5.0 §3.10, 3.1.1 §3.10).
public struct MQTTUnsubscribe: Sendable {
    public var packetID: Ranged<Int>?
    public var properties: MQTTProperties?
    public var filters: MQTTList<Ranged<String>>?

    public init() {}
}

/// SUBACK and UNSUBACK (MQTT 5.0 §3.9, §3.11): the packet identifier and one code per filter
/// (a 3.x UNSUBACK has no codes).
public struct MQTTSubscriptionAck: Sendable {
    public var packetID: Ranged<Int>?
    public var properties: MQTTProperties?
    /// Nil when the bytes did not reach the list, or (3.x UNSUBACK) there is none.
    public var codes: MQTTList<Ranged<UInt8>>?

    public init() {}
}
