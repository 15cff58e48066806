import Foundation
import Testing

/// The outside judges: every public Suricata MQTT capture dissects without a crash, and our PDUs
/// agree with Wireshark's tshark PDU by PDU on the samples and on those captures.
@Suite("Conformance with tshark and the Suricata captures")
struct ConformanceTests {
    @Test("every Suricata MQTT capture dissects in every format without crashing", arguments: Repo.suricataCaptures())
    func suricata(capture: String) throws {
        for format in ["text", "json", "table"] {
            let r = try dissect(["--format", format, capture])
            #expect(!r.crashed, "\(capture) crashed in \(format): \(r.stderr)")
            #expect(r.status == 0 || r.status == 1, "\(capture): exit \(r.status)")
            if format == "json" {
                let lines = r.stdout.split(separator: "\n")
                #expect(jsonLines(r.stdout).count == lines.count, "\(capture): a line is not valid JSON")
            }
        }
    }

    static var oracle: URL { Repo.shared.appendingPathComponent("tools/tshark-oracle") }

    /// Captures on which tshark is wrong, with the reason (each one is a test of its own below).
    static let tsharkIsWrong: [String: String] = [:]

    static func oracleTargets() -> [String] {
        Repo.sampleCaptures().map { Repo.samples.appendingPathComponent($0).path } + Repo.suricataCaptures()
    }

    @Test("our PDUs agree with tshark's on every sample and Suricata capture", arguments: oracleTargets())
    func agreement(capture: String) throws {
        let name = URL(fileURLWithPath: capture).lastPathComponent
        try #require(FileManager.default.fileExists(atPath: Self.oracle.path), "../shared/tools/tshark-oracle is missing")
        let base = (name as NSString).deletingPathExtension
        var cmd = Repo.binary.path + " --format json"
        let args = GoldenTests.arguments(for: name)
        if !args.isEmpty && capture.hasPrefix(Repo.samples.path) { cmd += " " + args.joined(separator: " ") }
        // tshark runs with its defaults, so a sample on a port of its own is compared on what tshark decodes there.
        var oracleArgs = [Self.oracle.path, capture, "--cmd", cmd]
        if Self.tsharkIsWrong[base] != nil { oracleArgs += ["--min-agree", "0"] }
        let r = try runProgram(URL(fileURLWithPath: "/usr/bin/env"), ["python3"] + oracleArgs, timeout: 300)
        #expect(r.status == 0, "\(name): \(r.stdout)\(r.stderr)")
    }
}
