import AMQP
import Dissection

/// What a table counts of a frame: a view of its typed values and the connection's note, with
/// no field tree.
extension AMQPDecodedFrame {
    /// The values a table counts of a frame with no problem, or nil for a frame with problems
    /// and for the frames whose tree carries more facts than a counted PDU holds: connection
    /// methods (the client's identity) and closes (the reply). The same facts
    /// `PDUFacts(deriving:)` reads off the frame's tree.
    func counted(_ note: AMQPFrameNote) -> CountedPDU? {
        guard problems.isEmpty else { return nil }
        let kind: String
        switch frame.type {
        case .method:
            guard let spec = method?.spec, spec.classID != 10, !(spec.classID == 20 && spec.methodID == 40) else { return nil }
            kind = spec.fullName
        case .header: kind = "header"
        case .body: kind = "body"
        case .heartbeat: kind = "heartbeat"
        default: return nil
        }
        var pdu = CountedPDU(kind: kind, wireLength: frame.wireLength)
        pdu.channel = Int(frame.channel)
        // Read through optional chains, where they are: `if let` copied the attribution and
        // the message (their strings and arrays retained, then released).
        if let queue = note.attribution?.queue { pdu.queue = queue }
        if let count = note.attribution?.ackedCount { pdu.ackedCount = count }
        if note.message != nil { pdu.message = note.message?.facts }
        return pdu
    }
}
