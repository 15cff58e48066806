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

@Suite("Command line")
struct CommandLineTests {
    @Test("JSON lines carry the keys the oracle reads, one object per PDU")
    func jsonKeys() throws {
        let path = try conversation().write(name: "json-keys")
        let r = try dissect(["--format", "json", path])
        #expect(r.status == 0)
        let pdus = jsonLines(r.stdout).filter { $0["protocol"] as? String == "mqtt" }
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
        #expect(jsonLines(r.stdout).filter { $0["protocol"] != nil }.count == 3)
        #expect(r.status == 0)
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
        #expect(jsonLines(r.stdout).filter { $0["protocol"] as? String == "mqtt" }.count == 6)
    }

    @Test("-f applies a BPF filter to files")
    func filter() throws {
        let path = try conversation().write(name: "filter")
        let none = try dissect(["--format", "json", "-f", "tcp port 9999", path])
        #expect(jsonLines(none.stdout).filter { $0["protocol"] != nil }.isEmpty)
        let all = try dissect(["--format", "json", "-f", "tcp port 1883", path])
        #expect(jsonLines(all.stdout).filter { $0["protocol"] != nil }.count == 6)
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
        #expect(jsonLines(try dissect(["--format", "json", path]).stdout).filter { $0["protocol"] != nil }.isEmpty)
        let r = try dissect(["--format", "json", "--decode-as", "8883=mqtt", path])
        #expect(jsonLines(r.stdout).filter { $0["protocol"] as? String == "mqtt" }.count == 1)
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
        #expect(jsonLines(r.stdout).filter { $0["protocol"] as? String == "mqtt" }.count >= 5)
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
