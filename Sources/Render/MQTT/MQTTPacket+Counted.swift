import Dissection
import MQTT

/// What a table counts of a packet: a view of the typed values, with no field tree.
extension MQTTPacket {
    /// The values a table counts of a packet in which the decoder found no problem, or nil for
    /// a packet with problems or a CONNECT (its client id and version are counted too: the
    /// field tree's facts carry them). The same facts `PDUFacts(deriving:)` reads off the tree.
    public func counted() -> CountedPDU? {
        guard problems.isEmpty, header == .complete, type != .connect, type != .subscribe, type != .unsubscribe else { return nil }
        var c = CountedPDU(kind: type.name, wireLength: wireLength)
        if type == .publish {
            guard let publish = publishCounts else { return nil }
            c.topic = publish.topic
            c.payloadLength = publish.payloadLength
            c.qos = publish.qos
            c.retained = publish.retain
        }
        return c
    }

    /// A CONNECT in which the decoder found no problem, as what a table counts of it: a box of
    /// its facts (kind, client id, version), no field tree; a SUBSCRIBE or UNSUBSCRIBE, a box of
    /// its kind with the typed packet (the broker model reads its filters); nil for any other
    /// packet. The same facts `PDUFacts(deriving:)` reads off its tree.
    func countedConnect() -> DissectedPDU? {
        guard problems.isEmpty, header == .complete else { return nil }
        if type == .subscribe || type == .unsubscribe {
            var pdu = DissectedPDU(protocolName: "mqtt", summary: type.name, wireLength: wireLength, kind: type.name)
            pdu.packet = self
            return pdu
        }
        guard case .connect(let connect) = content else { return nil }
        var pdu = DissectedPDU(protocolName: "mqtt", summary: "CONNECT", wireLength: wireLength, kind: "CONNECT")
        // The typed packet too: the broker model reads the will.
        pdu.packet = self
        if let id = connect.clientID { pdu.facts!.clientID = id.value }
        if let announced = connect.announcedVersion {
            pdu.facts!.connectVersion = announced.name
            pdu.facts!.version = announced.name
        }
        return pdu
    }

    /// A counted packet as the box an array of PDUs holds: its facts, no tree, the kind as summary.
    static func box(_ c: borrowing CountedPDU, type: MQTTPacketType) -> DissectedPDU {
        guard type == .publish else {
            // The shared facts of its packet type (nothing else is counted of it).
            return DissectedPDU(protocolName: "mqtt", summary: c.kind, wireLength: c.wireLength,
                                sharedFacts: kindFacts[Int(type.rawValue & 0x0F)])
        }
        var pdu = DissectedPDU(protocolName: "mqtt", summary: "PUBLISH", wireLength: c.wireLength, kind: "PUBLISH")
        pdu.facts!.setPublish(topic: c.topic!, payloadLength: c.payloadLength!, qos: c.qos!, retained: c.retained)
        return pdu
    }

    private static let kindFacts: [PDUFacts] = (0...15).map { PDUFacts(kind: MQTTPacketType(rawValue: UInt8($0)).name) }
}
