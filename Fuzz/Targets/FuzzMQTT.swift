import Dissection
import MQTT

/// The MQTT framer and decoder on arbitrary bytes in both directions, both at a stream's start
/// and mid-stream, then every renderer. Build with scripts/fuzz.sh; without FUZZING it replays files.
public func fuzzMQTT(_ data: [UInt8]) {
    let selector = data.first ?? 0
    do {
        let midStream = selector & 0x40 != 0
        var options = MQTTOptions()
        options.maxHeldPDUBytes = 4096 // small, so the skip-the-rest path is exercised
        var dissector = MQTTConnectionDissector(info: ConnectionInfo(startedMidStream: midStream, serverPort: 1883), options: options)
        FuzzSupport.renderAll(FuzzSupport.feed(data, to: &dissector), showSecrets: selector & 0x80 != 0)
    }
    let versions: [MQTTVersion] = [.v3_1, .v3_1_1, .v5]
    _ = MQTTDecoder.decodeAll(Array(data.dropFirst()), version: versions[Int(selector % 3)])
}
