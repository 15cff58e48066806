import Dissection

/// Checks of decoded PDUs that hold for any input, so the decoder targets find wrong field
/// trees as well as crashes: a failed check stops the process (libFuzzer saves the input).
public enum FuzzPDUCheck {
    /// Every field's and problem's byte range lies inside the PDU (offsets from its first byte,
    /// up to its wire length).
    public static func ranges(_ pdus: [DissectedPDU]) {
        for pdu in pdus {
            let length = pdu.wireLength
            if length < 0 { fail("negative wire length \(length)", pdu) }
            for problem in pdu.problems {
                if let range = problem.range, range.lowerBound < 0 || range.upperBound > length {
                    fail("problem \(problem.code) covers \(range), outside 0..<\(length)", pdu)
                }
            }
            pdu.fields.forEach { check($0, length, pdu) }
        }
    }

    private static func check(_ field: Field, _ length: Int, _ pdu: DissectedPDU) {
        if let range = field.range, range.lowerBound < 0 || range.upperBound > length {
            fail("field \(field.key) covers \(range), outside 0..<\(length)", pdu)
        }
        field.children.forEach { check($0, length, pdu) }
    }

    private static func fail(_ message: String, _ pdu: DissectedPDU) -> Never {
        fatalError("\(pdu.protocolName) PDU \"\(pdu.summary)\": \(message)")
    }
}
