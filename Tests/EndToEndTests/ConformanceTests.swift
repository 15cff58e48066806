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

    static func oracleTargets() -> [String] {
        Repo.sampleCaptures().map { Repo.samples.appendingPathComponent($0).path } + Repo.suricataCaptures()
    }

    /// Where tshark is wrong: in two-pass mode (which the oracle uses) tshark adds a second
    /// `mqtt.topic` to a 5.0 PUBLISH that carries both a topic and a Topic Alias (it records the
    /// alias mapping as a generated copy of the topic), so the oracle reads no topic for that PDU,
    /// where the packet has exactly one (MQTT 5.0 §3.3.2.1 Topic Name, §3.3.2.3.4 Topic Alias).
    /// Those PDUs are counted here so that the agreement asked for excludes them and nothing else.
    static func publishesThatSetATopicAlias(_ capture: String) throws -> Int {
        let r = try runProgram(URL(fileURLWithPath: "/usr/bin/env"),
                               ["tshark", "-r", capture, "-2", "-Y", "mqtt.msgtype == 3 && mqtt.property.topic_alias && mqtt.topic_len > 0",
                                "-T", "fields", "-e", "frame.number"], timeout: 120)
        return r.stdout.split(separator: "\n").count
    }

    @Test("our PDUs agree with tshark's on every sample and Suricata capture", arguments: oracleTargets())
    func agreement(capture: String) throws {
        let name = URL(fileURLWithPath: capture).lastPathComponent
        try #require(FileManager.default.fileExists(atPath: Self.oracle.path), "../shared/tools/tshark-oracle is missing")
        var cmd = Repo.binary.path + " --format json"
        let args = GoldenTests.arguments(for: name)
        if !args.isEmpty && capture.hasPrefix(Repo.samples.path) { cmd += " " + args.joined(separator: " ") }
        // tshark runs with its defaults, so a sample on a port of its own is compared on what tshark decodes there.
        let r = try runProgram(URL(fileURLWithPath: "/usr/bin/env"),
                               ["python3", Self.oracle.path, capture, "--cmd", cmd, "--min-agree", "0"], timeout: 300)
        #expect(r.status == 0, "\(name): \(r.stdout)\(r.stderr)")
        let summary = try #require(r.stdout.split(separator: "\n").last { $0.contains("tshark PDUs agree") }, "\(r.stdout)")
        // "CAPTURE: AGREE/TOTAL tshark PDUs agree (…)"
        let words = summary.split(separator: " ")
        let numbers = words.firstIndex(of: "tshark").flatMap { $0 > 0 ? words[$0 - 1] : nil }?
            .split(separator: "/").compactMap { Int($0) } ?? []
        try #require(numbers.count == 2, "\(summary)")
        let (agree, total) = (numbers[0], numbers[1])
        let excused = try Self.publishesThatSetATopicAlias(capture)
        #expect(agree >= total - excused, "\(name): \(r.stdout)")
        #expect(total > 0 || capture.hasPrefix(Repo.samples.path), "\(name): tshark decoded nothing")
    }

    /// The oracle runs tshark with its defaults, which do not decode a broker on another port; for
    /// a sample with `--decode-as PORT=mqtt`, tshark is told the same (`-d tcp.port==PORT,mqtt`) and
    /// the PDUs (sender, type, remaining length) compared in order.
    @Test("a sample on another port agrees with tshark told to decode that port",
          arguments: Repo.sampleCaptures().filter { GoldenTests.arguments(for: $0).contains("--decode-as") })
    func otherPort(sample: String) throws {
        let capture = Repo.samples.appendingPathComponent(sample).path
        let args = GoldenTests.arguments(for: sample)
        let decodeAs = try #require(args.firstIndex(of: "--decode-as").map { args[$0 + 1] })
        let port = try #require(decodeAs.split(separator: "=").first.map(String.init))
        let tshark = try runProgram(URL(fileURLWithPath: "/usr/bin/env"),
                                    ["tshark", "-r", capture, "-d", "tcp.port==\(port),mqtt", "-Y", "mqtt", "-T", "fields",
                                     "-E", "separator=|", "-e", "ip.src", "-e", "tcp.srcport", "-e", "mqtt.msgtype", "-e", "mqtt.len"],
                                    timeout: 120)
        var theirs: [String] = []
        for line in tshark.stdout.split(separator: "\n") {
            let f = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            guard f.count == 4 else { continue }
            // Several PDUs in one frame: the per-PDU fields are comma-separated.
            for (type, length) in zip(f[2].split(separator: ","), f[3].split(separator: ",")) {
                theirs.append("\(f[0]):\(f[1]) \(type) \(length)")
            }
        }
        let typeNumbers = ["CONNECT": 1, "CONNACK": 2, "PUBLISH": 3, "PUBACK": 4, "PUBREC": 5, "PUBREL": 6, "PUBCOMP": 7,
                           "SUBSCRIBE": 8, "SUBACK": 9, "UNSUBSCRIBE": 10, "UNSUBACK": 11, "PINGREQ": 12, "PINGRESP": 13,
                           "DISCONNECT": 14, "AUTH": 15]
        let ours = try dissect(["--format", "json"] + args + [capture]).stdout
        let mine = jsonLines(ours).compactMap { line -> String? in
            guard let m = line["mqtt"] as? [String: Any], let type = (m["type"] as? String).flatMap({ typeNumbers[$0] }),
                  let length = m["remaining_length"] as? Int, let src = line["src"] as? String else { return nil }
            return "\(src) \(type) \(length)"
        }
        #expect(!theirs.isEmpty, "tshark decoded nothing: \(tshark.stderr)")
        #expect(mine == theirs)
    }

    @Test("a 5.0 PUBLISH that sets a topic alias reports its one topic (tshark -2 reports it twice)")
    func aliasTopicOnce() throws {
        let capture = Repo.samples.appendingPathComponent("mqtt5-properties.pcap").path
        let r = try dissect(["--format", "json", capture])
        let publishes = jsonLines(r.stdout).compactMap { $0["mqtt"] as? [String: Any] }.filter { $0["type"] as? String == "PUBLISH" }
        let setting = publishes.filter { $0["topic_alias"] != nil && $0["topic_from_alias"] == nil }
        #expect(!setting.isEmpty)
        for p in setting { #expect((p["topic"] as? String)?.isEmpty == false) }
        let using = publishes.filter { $0["topic_from_alias"] as? Bool == true }
        #expect(!using.isEmpty)
        #expect(using.allSatisfy { ($0["topic"] as? String)?.isEmpty == false })
    }
}
