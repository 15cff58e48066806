#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import MQTT
import ProtoDissectKit

// Usage: CodecCheck CAPTURE...
// Reads each capture with proto-dissect, feeds every MQTT packet's typed values to the codec
// under test (ToyEncoder) and compares its bytes with the bytes on the wire. Exits 1 on a
// difference, naming the frame, connection and direction.
let captures = CommandLine.arguments.dropFirst()
guard !captures.isEmpty else {
    print("usage: CodecCheck CAPTURE...")
    exit(2)
}
var compared = 0, skipped = 0, differences = 0
for path in captures {
    try CaptureDissection.forEachPDU(inFile: path) { captured in
        guard let packet = captured.mqtt, let wire = captured.bytes else { return true }
        guard packet.problems.isEmpty, let encoded = ToyEncoder.encode(packet) else {
            skipped += 1
            return true
        }
        compared += 1
        if encoded != Array(wire) {
            differences += 1
            let at = zip(encoded, wire).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(encoded.count, wire.count)
            print("\(path) frame \(captured.frame), connection \(captured.connection), \(captured.direction): "
                  + "\(packet.type.name) encodes as \(encoded.count) bytes, the wire has \(wire.count); first difference at byte \(at)")
        }
        return true
    }
}
print("\(compared) MQTT packets re-encoded and compared, \(differences) different, \(skipped) not covered by the codec")
exit(differences == 0 && compared > 0 ? 0 : 1)
