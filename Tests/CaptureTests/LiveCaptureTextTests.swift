@testable import Capture
import Testing

@Suite("libpcap's error buffer read as text")
struct LiveCaptureTextTests {
    private func buffer(_ bytes: [UInt8], size: Int = 16) -> [CChar] {
        (bytes + [UInt8](repeating: 0, count: max(0, size - bytes.count))).map { CChar(bitPattern: $0) }
    }

    @Test("the message ends at the first NUL; what follows it in the buffer is not shown")
    func stopsAtNul() {
        #expect(LiveCapture.text(of: buffer(Array("eth9: no such device".utf8) + [0] + Array("stale".utf8), size: 64))
                == "eth9: no such device")
    }

    @Test("a buffer without a NUL is read whole, and an empty one is an empty message")
    func noNul() {
        #expect(LiveCapture.text(of: Array("full".utf8).map { CChar(bitPattern: $0) }) == "full")
        #expect(LiveCapture.text(of: buffer([])) == "")
    }

    @Test("bytes over 0x7F (negative as CChar) are read as UTF-8")
    func utf8() {
        #expect(LiveCapture.text(of: buffer(Array("périphérique".utf8))) == "périphérique")
    }
}
