import Dissection
import Foundation
import Testing

/// A short MQTT conversation: CONNECT (with a password), CONNACK, three PUBLISHes, DISCONNECT.
private func conversation(password: String = "s3cr3t-pass") -> SyntheticCapture {
    var c = SyntheticCapture()
    c.handshake()
    c.send(toServer: true, MQTTBytes.connect(clientID: "dev-1", user: "alice", password: password))
    c.send(toServer: false, MQTTBytes.connack)
    // Two PUBLISHes in one segment, then one alone.
    c.send(toServer: true, MQTTBytes.publish(topic: "a/b", payload: Array("one".utf8)) + MQTTBytes.publish(topic: "a/c", payload: Array("two".utf8), qos: 1, id: 7))
    c.send(toServer: true, MQTTBytes.publish(topic: "a/b", payload: Array("three".utf8)))
    c.send(toServer: true, MQTTBytes.disconnect)
    c.close()
    return c
}

/// A PDU's JSON line (not an analysis record, which names its protocol too).
private func isPDU(_ line: [String: Any]) -> Bool { line["protocol"] != nil && line["analysis"] == nil }

@Suite("Command line")
struct CommandLineTests {
    @Test("JSON lines carry the keys the oracle reads, one object per PDU")
    func jsonKeys() throws {
        let path = try conversation().write(name: "json-keys")
        let r = try dissect(["--format", "json", path])
        #expect(r.status == 0)
        let pdus = jsonLines(r.stdout).filter { isPDU($0) && $0["protocol"] as? String == "mqtt" }
        #expect(pdus.compactMap { ($0["mqtt"] as? [String: Any])?["type"] as? String } == ["CONNECT", "CONNACK", "PUBLISH", "PUBLISH", "PUBLISH", "DISCONNECT"])
        let second = try #require(pdus.dropFirst(3).first)
        let mqtt = try #require(second["mqtt"] as? [String: Any])
        #expect(mqtt["topic"] as? String == "a/c")
        #expect(mqtt["qos"] as? Int == 1)
        #expect(mqtt["packet_id"] as? Int == 7)
        #expect(mqtt["remaining_length"] as? Int == 10)
        #expect(second["src"] as? String == "127.0.0.1:50000")
        #expect(second["dst"] as? String == "127.0.0.1:1883")
        #expect(second["stream"] as? Int == 0)
        // Both PUBLISHes of one segment are completed by the same frame.
        #expect(second["frame"] as? Int == pdus[2]["frame"] as? Int)
        #expect((second["time"] as? String)?.hasSuffix("Z") == true)
        #expect(second["problems"] is [Any])
    }

    @Test("passwords are hidden in every format unless --show-secrets", arguments: ["text", "json", "table"])
    func secrets(format: String) throws {
        let path = try conversation(password: "hunter2-secret").write(name: "secrets-\(format)")
        let hidden = try dissect(["--format", format, path])
        #expect(!hidden.stdout.contains("hunter2-secret"))
        if format != "table" {
            #expect(hidden.stdout.contains("<hidden>"))
            let shown = try dissect(["--format", format, "--show-secrets", path])
            #expect(shown.stdout.contains("hunter2-secret"))
        }
    }

    @Test("AMQP SASL responses are hidden in every format unless --show-secrets", arguments: ["text", "json", "table"])
    func saslSecrets(format: String) throws {
        // The real RabbitMQ session's refused logins carry PLAIN responses with these passwords.
        let path = Repo.samples.appendingPathComponent("amqp-errors.pcap").path
        let hidden = try dissect(["--format", format, path])
        #expect(hidden.status == 0)
        #expect(!hidden.stdout.contains("wrong-password") && !hidden.stdout.contains("not-the-password"))
        if format != "table" {
            #expect(hidden.stdout.contains("<hidden>"))
            let shown = try dissect(["--format", format, "--show-secrets", path])
            #expect(shown.stdout.contains("wrong-password") && shown.stdout.contains("not-the-password"))
        }
    }

    @Test("-c stops after N PDUs")
    func count() throws {
        let path = try conversation().write(name: "count")
        let r = try dissect(["--format", "json", "-c", "3", path])
        #expect(jsonLines(r.stdout).filter(isPDU).count == 3)
        // The run stopped before the capture's end: a flow it did not see end is not reported.
        #expect(jsonLines(r.stdout).filter { $0["analysis"] != nil }.isEmpty)
        #expect(r.status == 0)
        // Read to its end, the QoS 1 PUBLISH that no PUBACK answers is.
        let all = try dissect(["--format", "json", path])
        #expect(jsonLines(all.stdout).filter { $0["analysis"] as? String == "unacknowledged" }.count == 1)
    }

    @Test("several captures in one run keep their connections apart: stream numbers continue, -r works too")
    func severalFiles() throws {
        let a = Repo.samples.appendingPathComponent("mqtt31.pcap").path
        let b = Repo.samples.appendingPathComponent("mqtt311-basic.pcap").path
        let json = try dissect(["--format", "json", "-r", a, b])
        #expect(json.status == 0)
        let connections = jsonLines(json.stdout).filter { $0["event"] as? String == "connection" }
        // 3 connections in the first file, 6 in the second: numbered 0…8, each once.
        #expect(connections.compactMap { $0["stream"] as? Int }.sorted() == Array(0..<9))
        let clientIDs = jsonLines(json.stdout).compactMap { line -> (Int, String)? in
            guard let m = line["mqtt"] as? [String: Any], let id = m["client_id"] as? String, let s = line["stream"] as? Int else { return nil }
            return (s, id)
        }
        #expect(clientIDs.count == 9, "one CONNECT per connection: \(clientIDs)")
        #expect(Set(clientIDs.map(\.0)).count == clientIDs.count, "a stream number has two CONNECTs: \(clientIDs)")
        let table = try dissect(["--format", "table", a, b])
        let rows = table.stdout.split(separator: "\n").filter { $0.hasPrefix("     ") && $0.contains("127.0.0.1:") }
        #expect(rows.count == 9, "\(table.stdout)")
    }

    @Test("- reads the capture from standard input")
    func standardInput() throws {
        let c = conversation()
        let r = try dissect(["--format", "json", "-"], stdin: Data(c.bytes))
        #expect(r.status == 0)
        #expect(jsonLines(r.stdout).filter { isPDU($0) && $0["protocol"] as? String == "mqtt" }.count == 6)
    }

    @Test("-f applies a BPF filter to files")
    func filter() throws {
        let path = try conversation().write(name: "filter")
        let none = try dissect(["--format", "json", "-f", "tcp port 9999", path])
        #expect(jsonLines(none.stdout).filter(isPDU).isEmpty)
        let all = try dissect(["--format", "json", "-f", "tcp port 1883", path])
        #expect(jsonLines(all.stdout).filter(isPDU).count == 6)
        let bad = try dissect(["-f", "tcp port port", path])
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("filter"))
    }

    @Test("--decode-as decodes another port")
    func decodeAs() throws {
        var c = SyntheticCapture(serverPort: 8883)
        c.handshake()
        c.send(toServer: true, MQTTBytes.connect(clientID: "x"))
        c.close()
        let path = try c.write(name: "decode-as")
        #expect(jsonLines(try dissect(["--format", "json", path]).stdout).filter(isPDU).isEmpty)
        let r = try dissect(["--format", "json", "--decode-as", "8883=mqtt", path])
        #expect(jsonLines(r.stdout).filter { isPDU($0) && $0["protocol"] as? String == "mqtt" }.count == 1)
    }

    @Test("--decode-as PORT=amqp decodes AMQP 0-9-1 on another port")
    func decodeAsAMQP() throws {
        // AMQP 0-9-1 §4.2.3: type, channel, size, payload, frame-end 0xCE.
        func frame(_ type: UInt8, channel: UInt16, _ payload: [UInt8]) -> [UInt8] {
            let n = UInt32(payload.count)
            return [type, UInt8(channel >> 8), UInt8(channel & 0xFF),
                    UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] + payload + [0xCE]
        }
        func method(_ classID: UInt8, _ methodID: UInt8, channel: UInt16 = 0, _ arguments: [UInt8] = []) -> [UInt8] {
            frame(1, channel: channel, [0, classID, 0, methodID] + arguments)
        }
        let tuneArguments: [UInt8] = [0x07, 0xFF,              // channel-max 2047
                                      0x00, 0x02, 0x00, 0x00,  // frame-max 131072
                                      0x00, 0x3C]              // heartbeat 60
        var c = SyntheticCapture(serverPort: 5673)
        c.handshake()
        c.send(toServer: true, Array("AMQP".utf8) + [0, 0, 9, 1])               // protocol header 0-9-1
        c.send(toServer: false, method(10, 30, tuneArguments))                   // connection.tune
        c.send(toServer: true, method(10, 31, tuneArguments)                     // connection.tune-ok
               + method(10, 40, [1, 0x2F, 0, 0]))                                // connection.open vhost "/"
        c.send(toServer: false, method(10, 41, [0]))                             // connection.open-ok
        c.send(toServer: true, method(20, 10, channel: 1, [0]))                  // channel.open
        c.send(toServer: false, method(20, 11, channel: 1, [0, 0, 0, 0]))        // channel.open-ok
        c.send(toServer: true, method(60, 40, channel: 1, [0, 0, 0, 4] + Array("jobs".utf8) + [0]) // basic.publish "" "jobs"
               + frame(2, channel: 1, [0, 60, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0]) // content header: body-size 2, no properties
               + frame(3, channel: 1, Array("hi".utf8)))                         // body "hi"
        c.close()
        let path = try c.write(name: "decode-as-amqp")

        let plain = try dissect(["--format", "json", path])
        #expect(plain.status == 0)
        #expect(jsonLines(plain.stdout).filter { $0["protocol"] as? String == "amqp" }.isEmpty)

        let r = try dissect(["--format", "json", "--decode-as", "5673=amqp", path])
        #expect(r.status == 0, "\(r.stderr)")
        let amqp = jsonLines(r.stdout).filter { $0["protocol"] as? String == "amqp" }.compactMap { $0["amqp"] as? [String: Any] }
        #expect(amqp.compactMap { $0["frame_type"] as? String }
                == ["protocol_header", "method", "method", "method", "method", "method", "method", "method", "header", "body"])
        #expect(amqp.compactMap { $0["method"] as? String }
                == ["connection.tune", "connection.tune-ok", "connection.open", "connection.open-ok",
                    "channel.open", "channel.open-ok", "basic.publish"])
        let publish = amqp.first { $0["method"] as? String == "basic.publish" }?["arguments"] as? [String: Any]
        #expect(publish?["routing_key"] as? String == "jobs")
    }

    @Test("a file cut inside a record: what came before is printed, the file is named, exit 1")
    func cutFile() throws {
        let c = conversation()
        let path = try c.write(name: "cut")
        try Data(c.bytes.dropLast(5)).write(to: URL(fileURLWithPath: path))
        let r = try dissect(["--format", "json", path])
        #expect(r.status == 1)
        #expect(r.stderr.contains(path))
        #expect(r.stderr.contains("cut off"))
        #expect(jsonLines(r.stdout).filter { isPDU($0) && $0["protocol"] as? String == "mqtt" }.count >= 5)
    }

    @Test("a file cut inside a record, as tables (counted on two threads): what came before is counted, exit 1")
    func cutFileTable() throws {
        let c = conversation()
        let path = try c.write(name: "cut-table")
        try Data(c.bytes.dropLast(5)).write(to: URL(fileURLWithPath: path))
        let r = try dissect(["--format", "table", path])
        #expect(r.status == 1)
        #expect(r.stderr.contains(path))
        #expect(r.stdout.contains("CONNECT 1") && r.stdout.contains("PUBLISH"), "\(r.stdout)")
        // From a pipe, read and counted on one thread: the same tables.
        let piped = try dissect(["--format", "table", "-"], stdin: Data(c.bytes.dropLast(5)))
        #expect(piped.status == 1)
        #expect(r.stdout == piped.stdout)
    }

    @Test("--threads 1, 2 and 5 write the same bytes in every format, over several captures in one run; --threads 0 is a usage error",
          arguments: ["text", "json", "table"])
    func threads(format: String) throws {
        let captures = ["mqtt311-basic.pcap", "amqp-errors.pcap", "mqtt5-properties.pcap", "mqtt-flows.pcap"].map { Repo.samples.appendingPathComponent($0).path }
        let one = try dissect(["--format", format, "--threads", "1"] + captures)
        #expect(one.status == 0)
        #expect(one.stdout.count > 1_000)
        for n in ["2", "5"] {
            let many = try dissect(["--format", format, "--threads", n] + captures)
            #expect(many.status == 0)
            #expect(many.stdout == one.stdout, "--threads \(n)")
        }
        #expect(try dissect(["--threads", "0", captures[0]]).status == 2)
    }

    @Test("unreadable input and usage errors have their own exit statuses")
    func exitStatuses() throws {
        let missing = try dissect(["/nonexistent/capture.pcap"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("/nonexistent/capture.pcap"))
        let notCapture = try dissect([Repo.root.appendingPathComponent("Package.swift").path])
        #expect(notCapture.status == 1)
        #expect(notCapture.stderr.contains("not a pcap"))
        #expect(try dissect([]).status == 2)
        #expect(try dissect(["--format", "xml", "x.pcap"]).status == 2)
        #expect(try dissect(["--mqtt-version", "4", "x.pcap"]).status == 2)
        let help = try dissect(["--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("EXAMPLES"))
    }

    @Test("snapshot-length truncation is a gap, never zeros")
    func snaplen() throws {
        var c = SyntheticCapture()
        c.handshake()
        c.send(toServer: true, MQTTBytes.connect(clientID: "dev"))
        // A PUBLISH whose payload the capture cut: the PDU is reported truncated, the next one still decodes.
        c.packet(toServer: true, flags: 0x18, payload: MQTTBytes.publish(topic: "t", payload: [UInt8](repeating: 0x41, count: 200)), capture: 60)
        c.send(toServer: true, MQTTBytes.publish(topic: "after", payload: Array("ok".utf8)))
        c.close()
        let r = try dissect(["--format", "json", try c.write(name: "snaplen")])
        let lines = jsonLines(r.stdout)
        #expect(lines.contains { ($0["event"] as? String) == "gap" })
        let topics = lines.compactMap { ($0["mqtt"] as? [String: Any])?["topic"] as? String }
        #expect(topics == ["t", "after"])
        #expect(!r.stdout.contains("\"payload\":\"" + String(repeating: "A", count: 100)))
    }

    @Test("data given up at a buffering limit is reported on stderr, and decoding resumes")
    func limitsReported() throws {
        var c = SyntheticCapture()
        c.handshake()
        c.send(toServer: true, MQTTBytes.connect(clientID: "dev"))
        // A segment that never arrives, then PUBLISHes held out of order behind the hole.
        let lost = MQTTBytes.publish(topic: "lost", payload: Array("x".utf8))
        let base: UInt32 = 1001 + UInt32(MQTTBytes.connect(clientID: "dev").count)
        var seq = base + UInt32(lost.count)
        for i in 0..<5 {
            let p = MQTTBytes.publish(topic: "held/\(i)", payload: [UInt8](repeating: 0x42, count: 100))
            c.packet(toServer: true, flags: 0x18, payload: p, sequence: seq)
            seq += UInt32(p.count)
        }
        let path = try c.write(name: "limits")
        let r = try dissect(["--format", "json", "--max-stream-buffer", "200", path])
        #expect(r.status == 0)
        #expect(r.stderr.contains("given up at the buffer limits"))
        let topics = jsonLines(r.stdout).compactMap { ($0["mqtt"] as? [String: Any])?["topic"] as? String }
        #expect(topics == ["held/0", "held/1", "held/2", "held/3", "held/4"])
        #expect(jsonLines(r.stdout).contains { $0["event"] as? String == "gap" })
    }

    @Test("the table format summarises connections and topics within 80 columns")
    func table() throws {
        let r = try dissect(["--format", "table", try conversation().write(name: "table")])
        #expect(r.stdout.contains("dev-1"))
        #expect(r.stdout.contains("a/b"))
        for line in r.stdout.split(separator: "\n") { #expect(line.count <= 80, "\(line)") }
    }
}

// MARK: - Colour, assumed MQTT version, link layers, timestamps

/// Runs proto-dissect with `environment` changes applied (nil removes a variable; Support's
/// runProgram always sets NO_COLOR=1). With `terminal`, standard output is a pseudo-terminal,
/// so `--color auto` sees a TTY; its output is returned as stdout (with the TTY's CR LF line ends).
private func dissect(_ arguments: [String], environment: [String: String?], terminal: Bool = false) throws -> RunResult {
    guard terminal else {
        // runProgram sets NO_COLOR itself; run without it through env(1), which can unset it.
        var envArguments: [String] = []
        for (name, value) in environment.sorted(by: { $0.key < $1.key }) {
            if let value { envArguments.append("\(name)=\(value)") } else { envArguments += ["-u", name] }
        }
        return try runProgram(URL(fileURLWithPath: "/usr/bin/env"), envArguments + [Repo.binary.path] + arguments)
    }
    // The pseudo-terminal calls are in libc but not in Swift's Glibc module: look them up.
    typealias FDCall = @convention(c) (Int32) -> Int32
    typealias NameCall = @convention(c) (Int32) -> UnsafeMutablePointer<CChar>?
    guard let openpt = dlsym(nil, "posix_openpt"), let grant = dlsym(nil, "grantpt"),
          let unlock = dlsym(nil, "unlockpt"), let ptsname = dlsym(nil, "ptsname") else {
        throw CocoaError(.featureUnsupported)
    }
    let master = unsafeBitCast(openpt, to: FDCall.self)(O_RDWR | O_NOCTTY)
    guard master >= 0, unsafeBitCast(grant, to: FDCall.self)(master) == 0, unsafeBitCast(unlock, to: FDCall.self)(master) == 0,
          let name = unsafeBitCast(ptsname, to: NameCall.self)(master) else {
        throw CocoaError(.fileReadUnknown)
    }
    defer { close(master) }
    let slave = open(String(cString: name), O_RDWR | O_NOCTTY)
    guard slave >= 0 else { throw CocoaError(.fileReadUnknown) }
    let p = Process()
    p.executableURL = Repo.binary
    p.arguments = arguments
    var env = ProcessInfo.processInfo.environment
    for (key, value) in environment { env[key] = value }
    p.environment = env
    p.standardInput = FileHandle.nullDevice
    p.standardOutput = FileHandle(fileDescriptor: slave, closeOnDealloc: false)
    p.standardError = FileHandle.nullDevice
    try p.run()
    close(slave) // the child holds its own copy; reads see EIO once it exits and all is drained
    var output: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    let deadline = Date().addingTimeInterval(60)
    while Date() < deadline {
        var fds = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
        let ready = poll(&fds, 1, 100)
        if ready > 0 {
            let n = read(master, &buffer, buffer.count)
            if n <= 0 { break }
            output += buffer[0..<n]
        } else if !p.isRunning {
            break
        }
    }
    if p.isRunning { kill(p.processIdentifier, SIGKILL) }
    p.waitUntilExit()
    return RunResult(status: p.terminationStatus, stdout: String(decoding: output, as: UTF8.self), stderr: "",
                     crashed: p.terminationReason == .uncaughtSignal)
}

/// A capture that starts inside an MQTT 5.0 connection: no handshake, no CONNECT, a PUBLISH
/// whose properties (Payload Format Indicator 1) a 3.1.1 reading would take for payload.
private func midConnection5() -> SyntheticCapture {
    var c = SyntheticCapture()
    c.send(toServer: true, MQTTBytes.publish5(topic: "a/b", properties: [0x01, 0x01], payload: Array("hi".utf8)))
    c.send(toServer: true, MQTTBytes.publish5(topic: "a/c", properties: [0x01, 0x00], payload: Array("ho".utf8)))
    return c
}

private let ansiEscape = "\u{1B}["

extension CommandLineTests {
    @Test("--color always paints text output; --color never and the default into a pipe do not")
    func colourChoices() throws {
        let path = try conversation().write(name: "colour")
        // No NO_COLOR anywhere, so only the choice and the pipe decide.
        let always = try dissect(["--color", "always", path], environment: ["NO_COLOR": nil])
        #expect(always.status == 0)
        #expect(always.stdout.contains(ansiEscape + "1mCONNECT"), "\(always.stdout)")
        let never = try dissect(["--color", "never", path], environment: ["NO_COLOR": nil])
        #expect(never.status == 0)
        #expect(never.stdout.contains("CONNECT"))
        #expect(!never.stdout.contains("\u{1B}"))
        let piped = try dissect([path], environment: ["NO_COLOR": nil])
        #expect(piped.stdout.contains("CONNECT"))
        #expect(!piped.stdout.contains("\u{1B}"))
        // Only text is painted: JSON stays plain even when asked.
        #expect(!(try dissect(["--color", "always", "--format", "json", path], environment: ["NO_COLOR": nil])).stdout.contains("\u{1B}"))
    }

    @Test("--color auto paints on a terminal unless NO_COLOR is set")
    func colourAutoOnTerminal() throws {
        let path = try conversation().write(name: "colour-tty")
        let tty = try dissect(["--color", "auto", path], environment: ["NO_COLOR": nil], terminal: true)
        #expect(tty.status == 0)
        #expect(tty.stdout.contains(ansiEscape), "a terminal without NO_COLOR gets colour: \(tty.stdout)")
        let noColor = try dissect(["--color", "auto", path], environment: ["NO_COLOR": "1"], terminal: true)
        #expect(noColor.status == 0)
        #expect(noColor.stdout.contains("CONNECT"))
        #expect(!noColor.stdout.contains("\u{1B}"))
        // --color always wins over NO_COLOR.
        let forced = try dissect(["--color", "always", path], environment: ["NO_COLOR": "1"], terminal: true)
        #expect(forced.stdout.contains(ansiEscape))
    }

    @Test("--mqtt-version 5 decodes a connection whose CONNECT was not captured as 5.0")
    func assumedVersion5() throws {
        let path = try midConnection5().write(name: "assume-v5")
        let assumed = try dissect(["--format", "json", "--mqtt-version", "5", path])
        #expect(assumed.status == 0)
        let pdus = jsonLines(assumed.stdout).filter { isPDU($0) && $0["protocol"] as? String == "mqtt" }
        let mqtt = pdus.compactMap { $0["mqtt"] as? [String: Any] }
        try #require(mqtt.count == 2, "\(assumed.stdout)")
        #expect(mqtt.map { ($0["properties"] as? [String: Any])?["payload_format_indicator"] as? Int } == [1, 0])
        #expect(mqtt.map { $0["payload"] as? String } == ["hi", "ho"])
        #expect(mqtt.map { $0["topic"] as? String } == ["a/b", "a/c"])
        let codes = pdus.flatMap { ($0["problems"] as? [[String: Any]] ?? []).compactMap { $0["code"] as? String } }
        #expect(!codes.contains("version-guessed"))

        // Without the option the same bytes read as 3.1.1: properties become payload, and the guess is flagged.
        let guessed = try dissect(["--format", "json", path])
        #expect(guessed.status == 0)
        let first = try #require(jsonLines(guessed.stdout).first { isPDU($0) && $0["protocol"] as? String == "mqtt" })
        let firstMQTT = try #require(first["mqtt"] as? [String: Any])
        #expect(firstMQTT["properties"] == nil)
        #expect(firstMQTT["payload_length"] as? Int == 5) // 02 01 01 'h' 'i'
        let problems = (first["problems"] as? [[String: Any]] ?? []).compactMap { $0["code"] as? String }
        #expect(problems.contains("version-guessed"))
    }

    @Test("--mqtt-version takes only 3.1, 3.1.1 or 5: anything else is a usage error", arguments: ["4", "garbage", "5.1", ""])
    func badMQTTVersion(value: String) throws {
        let path = try midConnection5().write(name: "bad-version")
        let r = try dissect(["--mqtt-version", value, path])
        #expect(r.status == 2)
        #expect(r.stderr.contains("--mqtt-version"), "\(r.stderr)")
        #expect(r.stdout.isEmpty)
    }

    @Test("an unsupported link type is reported once per capture, not once per packet", arguments: ["text", "json"])
    func unsupportedLinkTypeOnce(format: String) throws {
        let c = conversation() // 10 packets
        try #require(c.records.count == 10)
        var bytes = c.bytes
        bytes.replaceSubrange(20..<24, with: [147, 0, 0, 0]) // LINKTYPE_USER0
        let path = try SyntheticCapture.write(bytes, name: "unknown-link-\(format)", suffix: "pcap")
        let r = try dissect(["--format", format, path])
        #expect(r.status == 0)
        let everything = r.stdout + r.stderr
        #expect(everything.components(separatedBy: "link type 147").count - 1 == 1, "\(everything)")
        if format == "json" {
            let notes = jsonLines(r.stdout).filter { $0["event"] as? String == "unsupported-link-type" }
            #expect(notes.count == 1)
        } else {
            #expect(everything.contains("is not supported"))
        }
        #expect(!everything.contains("CONNECT"))
    }

    @Test("pcapng with an Ethernet and a Linux SLL2 interface, nanosecond timestamps: both decode, times keep 9 digits")
    func pcapngTwoLinkTypes() throws {
        var ethernet = SyntheticCapture(clientPort: 50_001, link: .ethernet)
        ethernet.extraNanoseconds = 123
        ethernet.handshake()
        ethernet.send(toServer: true, MQTTBytes.connect(clientID: "over-ethernet"))
        ethernet.send(toServer: false, MQTTBytes.connack)
        ethernet.close()
        var cooked = SyntheticCapture(clientPort: 50_002, link: .linuxSLL2)
        cooked.time += 10 // after the Ethernet conversation: records are written interface by interface
        cooked.extraNanoseconds = 456
        cooked.handshake()
        cooked.send(toServer: true, MQTTBytes.connect(clientID: "over-sll2"))
        cooked.send(toServer: false, MQTTBytes.connack)
        cooked.close()
        let file = SyntheticCapture.pcapng([(ethernet, 9), (cooked, 9)])
        let path = try SyntheticCapture.write(file, name: "two-links", suffix: "pcapng")

        let r = try dissect(["--format", "json", path])
        #expect(r.status == 0, "\(r.stderr)")
        let pdus = jsonLines(r.stdout).filter { isPDU($0) && $0["protocol"] as? String == "mqtt" }
        #expect(pdus.compactMap { ($0["mqtt"] as? [String: Any])?["client_id"] as? String } == ["over-ethernet", "over-sll2"])
        #expect(pdus.compactMap { ($0["mqtt"] as? [String: Any])?["type"] as? String } == ["CONNECT", "CONNACK", "CONNECT", "CONNACK"])
        #expect(pdus.compactMap { $0["src"] as? String } == ["127.0.0.1:50001", "127.0.0.1:1883", "127.0.0.1:50002", "127.0.0.1:1883"])
        // The fourth packet of each conversation: 4 ms after its start, plus the sub-microsecond part.
        #expect(pdus.compactMap { $0["time"] as? String } == ["2023-11-14T22:13:20.004000123Z", "2023-11-14T22:13:20.005000123Z",
                                                               "2023-11-14T22:13:30.004000456Z", "2023-11-14T22:13:30.005000456Z"])
        let text = try dissect([path])
        #expect(text.stdout.contains("22:13:30.004000456"), "\(text.stdout)")
    }

    @Test("raw IPv4 (LINKTYPE_IPV4, 228) decodes MQTT")
    func linkTypeIPv4() throws {
        var c = SyntheticCapture(link: .ipv4)
        c.handshake()
        c.send(toServer: true, MQTTBytes.connect(clientID: "raw-v4"))
        c.send(toServer: false, MQTTBytes.connack)
        c.close()
        #expect(Array(c.bytes[20..<24]) == [228, 0, 0, 0])
        let r = try dissect(["--format", "json", try c.write(name: "linktype-228")])
        #expect(r.status == 0)
        let pdus = jsonLines(r.stdout).filter { isPDU($0) && $0["protocol"] as? String == "mqtt" }
        #expect(pdus.compactMap { ($0["mqtt"] as? [String: Any])?["client_id"] as? String } == ["raw-v4"])
        #expect(pdus.compactMap { $0["src"] as? String } == ["127.0.0.1:50000", "127.0.0.1:1883"])
    }

    @Test("IPv6 over Ethernet with a hop-by-hop options header decodes MQTT; endpoints print as [addr]:port")
    func ipv6HopByHop() throws {
        var c = SyntheticCapture(link: .ethernet, ipv6: true, hopByHop: true)
        c.handshake()
        c.send(toServer: true, MQTTBytes.connect(clientID: "v6-client"))
        c.send(toServer: false, MQTTBytes.connack)
        c.send(toServer: true, MQTTBytes.publish(topic: "v6/topic", payload: Array("six".utf8)))
        c.close()
        let r = try dissect(["--format", "json", try c.write(name: "ipv6-hbh")])
        #expect(r.status == 0)
        let pdus = jsonLines(r.stdout).filter { isPDU($0) && $0["protocol"] as? String == "mqtt" }
        #expect(pdus.compactMap { ($0["mqtt"] as? [String: Any])?["type"] as? String } == ["CONNECT", "CONNACK", "PUBLISH"])
        #expect(pdus.compactMap { $0["src"] as? String } == ["[2001:db8::1]:50000", "[2001:db8::2]:1883", "[2001:db8::1]:50000"])
        #expect(pdus.compactMap { $0["dst"] as? String } == ["[2001:db8::2]:1883", "[2001:db8::1]:50000", "[2001:db8::2]:1883"])
        #expect(pdus.last.flatMap { ($0["mqtt"] as? [String: Any])?["payload"] as? String } == "six")
        #expect(pdus.allSatisfy { ($0["problems"] as? [Any])?.isEmpty == true })
    }

    @Test("a non-minimal remaining length cites the document of the connection's version",
          arguments: [(UInt8(3), "MQTT 3.1.1 §2.2.3"), (4, "MQTT 3.1.1 §2.2.3"), (5, "MQTT 5.0 §1.5.5")])
    func nonMinimalRemainingLengthReference(level: UInt8, reference: String) throws {
        var c = SyntheticCapture()
        c.handshake()
        c.send(toServer: true, MQTTBytes.connect(clientID: "vbi", level: level))
        c.send(toServer: false, level == 5 ? [0x20, 0x03, 0x00, 0x00, 0x00] : MQTTBytes.connack)
        let body = MQTTBytes.string("t") + (level == 5 ? [0] : []) + Array("x".utf8)
        let lengthInTwoBytes: [UInt8] = [0x80 | UInt8(body.count), 0x00] // the same length, with an empty second group
        c.send(toServer: true, [0x30] + lengthInTwoBytes + body)
        c.close()
        let r = try dissect(["--format", "json", try c.write(name: "non-minimal-\(level)")])
        let publish = try #require(jsonLines(r.stdout).first { ($0["mqtt"] as? [String: Any])?["type"] as? String == "PUBLISH" })
        #expect((publish["mqtt"] as? [String: Any])?["payload"] as? String == "x")
        let problem = try #require((publish["problems"] as? [[String: Any]])?.first { $0["code"] as? String == "non-minimal-remaining-length" })
        #expect(problem["reference"] as? String == reference)
    }

    /// The digits after the point of every MQTT PDU's JSON time, and the text output, for a
    /// one-interface pcapng with the given `if_tsresol`.
    private func fractionDigits(tsresol: UInt8) throws -> (json: [Int], text: [Int]) {
        var c = SyntheticCapture()
        c.extraNanoseconds = 789
        c.handshake()
        c.send(toServer: true, MQTTBytes.connect(clientID: "clock"))
        c.send(toServer: false, MQTTBytes.connack)
        c.close()
        let path = try SyntheticCapture.write(SyntheticCapture.pcapng([(c, tsresol)]), name: "tsresol-\(tsresol)", suffix: "pcapng")
        let json = try dissect(["--format", "json", path])
        let times = jsonLines(json.stdout).filter(isPDU).compactMap { $0["time"] as? String }
        let jsonDigits = times.map { $0.split(separator: ".").last.map { $0.dropLast().count } ?? 0 } // drop the Z
        // Text lines: "#5 22:13:20.004 127.0.0.1:50000 → …"
        let text = try dissect([path])
        // PDU lines (not the analysis's: the capture has no DISCONNECT).
        let textDigits = text.stdout.split(separator: "\n").filter { $0.hasPrefix("#") && !$0.contains(" analysis: ") }.compactMap { line in
            line.split(separator: " ").dropFirst().first?.split(separator: ".").last?.count
        }
        return (jsonDigits, textDigits)
    }

    @Test("times print with the capture's precision: 6 digits for µs (and 100 µs), 9 for anything finer",
          arguments: [(UInt8(6), 6), (4, 6), (9, 9), (7, 9)])
    func timePrecision(tsresol: UInt8, digits: Int) throws {
        let (json, text) = try fractionDigits(tsresol: tsresol)
        #expect(json == [digits, digits])
        #expect(text == [digits, digits])
    }

    @Test("Timestamp prints the digits it is given: 3, 6 or 9")
    func timestampDigits() {
        let ms = Timestamp(seconds: 1_700_000_000, nanoseconds: 5_123_456, fractionalDigits: 3)
        #expect(ms.iso8601 == "2023-11-14T22:13:20.005Z")
        #expect(ms.timeOfDay == "22:13:20.005")
        let us = Timestamp(seconds: 1_700_000_000, nanoseconds: 5_123_456)
        #expect(us.iso8601 == "2023-11-14T22:13:20.005123Z")
        #expect(us.fractionalDigits == 6)
        let ns = Timestamp(seconds: 1_700_000_000, nanoseconds: 5_123_456, nanosecondPrecision: true)
        #expect(ns.timeOfDay == "22:13:20.005123456")
        #expect(ns.fractionalDigits == 9)
        #expect(Timestamp(seconds: 0, nanoseconds: 0, fractionalDigits: 12).fractionalDigits == 9)
    }

    @Test("a pcapng interface with millisecond timestamps prints 3 digits")
    func millisecondPrecision() throws {
        let (json, text) = try fractionDigits(tsresol: 3)
        #expect(json.count == 2 && text.count == 2)
        #expect(json == [3, 3])
        #expect(text == [3, 3])
    }
}
