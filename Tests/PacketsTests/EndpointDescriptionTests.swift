import Testing
@testable import Packets

/// `Endpoint.description` writes an IPv4 endpoint digit by digit: the same text as interpolating
/// the four bytes and the port.
@Suite("Endpoint description")
struct EndpointDescriptionTests {
    static func interpolated(_ a: UInt32, _ port: UInt16) -> String {
        "\(a >> 24).\((a >> 16) & 0xFF).\((a >> 8) & 0xFF).\(a & 0xFF):\(port)"
    }

    @Test("an IPv4 endpoint reads as interpolated", arguments: [
        (UInt32(0), UInt16(0)), (0x7F00_0001, 1883), (0xFFFF_FFFF, 65535), (0x0A01_0000, 1024), (0x0A09_630A, 9),
        (0x6400_0A63, 10), (0xC0A8_0164, 99), (0x0102_0304, 100), (0x0A0A_0A0A, 999), (0x6363_6363, 1000), (0x0A00_0001, 10000),
    ])
    func fixed(address: UInt32, port: UInt16) {
        #expect(Endpoint(address: .v4(address), port: port).description == Self.interpolated(address, port))
    }

    @Test("10,000 random IPv4 endpoints read as interpolated")
    func random() {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<10_000 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            let address = UInt32(truncatingIfNeeded: state >> 16), port = UInt16(truncatingIfNeeded: state >> 48)
            #expect(Endpoint(address: .v4(address), port: port).description == Self.interpolated(address, port))
        }
    }
}
