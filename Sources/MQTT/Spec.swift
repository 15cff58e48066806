import Dissection

/// Section references, which differ between the 3.1.1 and 5.0 documents. MQTT 3.1 has no
/// numbered conformance statements; its packets are checked against the 3.1.1 text.
struct Spec {
    let version: MQTTVersion

    func ref(_ v311: String, _ v5: String) -> String {
        version == .v5 ? "MQTT 5.0 §\(v5)" : "MQTT 3.1.1 §\(v311)"
    }

    var remainingLength: String { ref("2.2.3", "2.1.4") }
    var fixedHeaderFlags: String { ref("2.2.2", "2.1.3") }
    var packetIdentifier: String { ref("2.3.1", "2.2.1") }
    var utf8String: String { ref("1.5.3", "1.5.4") }
    var variableByteInteger: String { ref("2.2.3", "1.5.5") }
    var topicNames: String { ref("4.7", "4.7") }
}
