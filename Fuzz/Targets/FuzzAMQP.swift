import AMQP
import Dissection

/// The AMQP framer and decoder (field tables included) on arbitrary bytes in both directions,
/// at a stream's start and mid-stream, then every renderer.
public func fuzzAMQP(_ data: [UInt8]) {
    let selector = data.first ?? 0
    do {
        let midStream = selector & 0x40 != 0
        var options = AMQPOptions()
        options.maxHeldFrameBytes = 4096
        var dissector = AMQPConnectionDissector(info: ConnectionInfo(startedMidStream: midStream, serverPort: 5672), options: options)
        FuzzSupport.renderAll(FuzzSupport.feed(data, to: &dissector), showSecrets: selector & 0x80 != 0)
    }
    _ = AMQPDecoder.decodeAll(Array(data.dropFirst()))
}
