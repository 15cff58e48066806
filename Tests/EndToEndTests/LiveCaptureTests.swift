import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// proto-dissect running live in the background, its output going to temporary files.
final class LiveDissect {
    let process = Process()
    let outPath: String
    let errPath: String

    init(_ arguments: [String]) throws {
        let stem = Scratch.directory + "live-\(UInt32.random(in: 0...UInt32.max))"
        outPath = stem + ".out"
        errPath = stem + ".err"
        _ = FileManager.default.createFile(atPath: outPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errPath, contents: nil)
        process.executableURL = Repo.binary
        process.arguments = arguments
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Wait for the "listening on" line: the capture is armed.
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, process.isRunning, !read(errPath).contains("listening on") { usleep(50_000) }
        guard read(errPath).contains("listening on") else {
            kill(process.processIdentifier, SIGKILL)
            throw LiveTestError("proto-dissect did not start capturing: \(read(errPath))")
        }
    }

    private func read(_ path: String) -> String {
        String(decoding: (try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data(), as: UTF8.self)
    }

    /// Waits for exit (sending `signal`, SIGINT by default, first when `interrupt`), bounded.
    func finish(interrupt: Bool, signal: Int32 = SIGINT, timeout: Double = 15) -> (status: Int32, stdout: String, stderr: String) {
        if interrupt { kill(process.processIdentifier, signal) }
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(50_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        defer { try? FileManager.default.removeItem(atPath: outPath); try? FileManager.default.removeItem(atPath: errPath) }
        return (process.terminationStatus, read(outPath), read(errPath))
    }
}

/// Publishes with mosquitto_pub (bounded by a timeout).
func mosquittoPub(port: UInt16, topic: String, message: String, qos: Int, version: String = "mqttv311") throws {
    let r = try runProgram(URL(fileURLWithPath: "/usr/bin/timeout"),
                           ["10", "mosquitto_pub", "-h", "127.0.0.1", "-p", String(port), "-V", version, "-q", String(qos), "-t", topic, "-m", message], timeout: 15)
    if r.status != 0 { throw LiveTestError("mosquitto_pub failed: \(r.stderr)") }
}

// Each live capture is filtered to its test broker's port (-f): a developer's own broker on 1883
// or 5672 may carry traffic of its own meanwhile.
@Suite("Live capture on lo against a real mosquitto", .serialized)
struct LiveCaptureTests {
    let messages: [(topic: String, body: String, qos: Int)] = [
        ("live/zero", "hello-0", 0), ("live/one", "hello-one-1", 1), ("live/two", "hello-two-two-2", 2),
    ]

    @Test("every message sent is dissected live with its topic, QoS and size; SIGINT stops cleanly; -w replays")
    func publishAndInterrupt() throws {
        let broker = try Mosquitto()
        defer { broker.stop() }
        let recording = Scratch.directory + "live-\(broker.port).pcap"
        let live = try LiveDissect(["-i", "lo", "--decode-as", "\(broker.port)=mqtt", "-f", "tcp port \(broker.port)", "--format", "json", "-w", recording])
        for m in messages { try mosquittoPub(port: broker.port, topic: m.topic, message: m.body, qos: m.qos) }
        usleep(500_000)
        let (status, stdout, stderr) = live.finish(interrupt: true)
        #expect(status == 0, "\(stderr)")
        #expect(stderr.contains("packets captured"))
        #expect(stderr.contains("dropped by the kernel"))
        func publishes(_ text: String) -> [[String: Any]] {
            jsonLines(text).compactMap { $0["mqtt"] as? [String: Any] }.filter { $0["type"] as? String == "PUBLISH" }
        }
        let seen = publishes(stdout)
        for m in messages {
            let match = seen.first { $0["topic"] as? String == m.topic }
            #expect(match != nil, "no PUBLISH for \(m.topic) in: \(stdout.prefix(2000))")
            #expect(match?["qos"] as? Int == m.qos)
            #expect(match?["payload_length"] as? Int == m.body.utf8.count)
        }
        // The -w file replays to the same PUBLISHes.
        let replay = try dissect(["--format", "json", "--decode-as", "\(broker.port)=mqtt", "-f", "tcp port \(broker.port)", recording])
        #expect(replay.status == 0)
        #expect(publishes(replay.stdout).compactMap { $0["topic"] as? String } == seen.compactMap { $0["topic"] as? String })
    }

    @Test("a burst seen through any loses nothing: 20 QoS 1 publishes of 2 KB, each on its own connection")
    func burstOnAny() throws {
        // Through `any` (MTU unknown), libpcap's default ring in immediate mode held only 8
        // packets, in frames as large as the snapshot length: this burst lost about 150 packets
        // and 3 to 6 PUBLISHes.
        let broker = try Mosquitto()
        defer { broker.stop() }
        let live = try LiveDissect(["-i", "any", "--decode-as", "\(broker.port)=mqtt", "-f", "tcp port \(broker.port)", "--format", "json"])
        // One shell loop, so that the connections follow each other closely (one process per
        // publish from here spaces them out enough for the old ring to keep up).
        let script = "for i in $(seq 0 19); do timeout 10 mosquitto_pub -h 127.0.0.1 -p \(broker.port) -q 1 "
            + "-t live/burst/$i -m \(String(repeating: "x", count: 2000)) || exit 1; done"
        let publish = try runProgram(URL(fileURLWithPath: "/bin/sh"), ["-c", script], timeout: 60)
        #expect(publish.status == 0, "\(publish.stderr)")
        usleep(500_000)
        let (status, stdout, stderr) = live.finish(interrupt: true)
        #expect(status == 0, "\(stderr)")
        let topics = Set(jsonLines(stdout).compactMap { $0["mqtt"] as? [String: Any] }
            .filter { $0["type"] as? String == "PUBLISH" }.compactMap { $0["topic"] as? String })
        #expect(topics == Set((0..<20).map { "live/burst/\($0)" }), "\(stderr)")
    }

    @Test("-c N stops by itself after N PDUs, on lo and on any", arguments: ["lo", "any"])
    func countStops(interface: String) throws {
        let broker = try Mosquitto()
        defer { broker.stop() }
        let live = try LiveDissect(["-i", interface, "--decode-as", "\(broker.port)=mqtt", "-f", "tcp port \(broker.port)", "--format", "json", "-c", "2"])
        try mosquittoPub(port: broker.port, topic: "live/count", message: "x", qos: 0)
        let (status, stdout, _) = live.finish(interrupt: false)
        #expect(status == 0)
        let types = jsonLines(stdout).compactMap { ($0["mqtt"] as? [String: Any])?["type"] as? String }
        // The first two PDUs of the exchange. On `any` the kernel may hand over the broker's CONNACK
        // and the client's PUBLISH right after it in either order (both directions are seen on lo,
        // queued per CPU), so the second is one of those two.
        #expect(types.count == 2)
        #expect(types.first == "CONNECT")
        #expect(types.last == "CONNACK" || (interface == "any" && types.last == "PUBLISH"), "\(types)")
    }

    @Test("the table format prints its summary on SIGINT and on SIGTERM", arguments: [SIGINT, SIGTERM])
    func tableOnInterrupt(signal: Int32) throws {
        let broker = try Mosquitto()
        defer { broker.stop() }
        let live = try LiveDissect(["-i", "lo", "--decode-as", "\(broker.port)=mqtt", "-f", "tcp port \(broker.port)", "--format", "table"])
        try mosquittoPub(port: broker.port, topic: "live/table", message: "abc", qos: 1)
        usleep(300_000)
        let (status, stdout, stderr) = live.finish(interrupt: true, signal: signal)
        #expect(status == 0)
        #expect(stdout.contains("Connections"))
        #expect(stdout.contains("live/table"))
        #expect(stderr.contains("dropped by the kernel"))
    }

    @Test("-w to a full disk says which file and why, and exits 3 (output could not be written)")
    func recordingToFullDisk() throws {
        let r = try runProgram(URL(fileURLWithPath: "/usr/bin/timeout"), ["20", Repo.binary.path, "-i", "lo", "-f", "tcp port 9", "-w", "/dev/full"], timeout: 30)
        #expect(r.status == 3, "\(r.stderr)")
        #expect(r.stderr.contains("proto-dissect: /dev/full: cannot write: No space left on device\n"), "\(r.stderr)")
    }

    @Test("-D lists the interfaces, lo and any among them")
    func listInterfaces() throws {
        let r = try dissect(["-D"])
        #expect(r.status == 0)
        let names = r.stdout.split(separator: "\n").compactMap { $0.split(separator: " ").dropFirst().first.map(String.init) }
        #expect(names.contains("lo") && names.contains("any"), "\(r.stdout)")
    }

    @Test("without the privilege to capture, the message says what is needed")
    func noPrivilege() throws {
        // As user nobody, with no capabilities: libpcap cannot open a packet socket.
        let r = try runProgram(URL(fileURLWithPath: "/usr/bin/setpriv"),
                               ["--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all", Repo.binary.path, "-i", "lo"],
                               timeout: 20)
        #expect(r.status == 1, "\(r.stderr)")
        #expect(r.stderr.contains("root") && r.stderr.contains("cap_net_raw,cap_net_admin") && r.stderr.contains("setcap"), "\(r.stderr)")
    }

    @Test("an unknown interface gets a message listing the available ones")
    func unknownInterface() throws {
        let r = try dissect(["-i", "nosuchif0"])
        #expect(r.status == 1)
        #expect(r.stderr.contains("lo"))
    }
}

@Suite("Live capture on lo against a real RabbitMQ", .serialized)
struct LiveAMQPTests {
    @Test("two brokers started at once both run: each node has a name, distribution port and cookie of its own")
    func sideBySide() throws {
        // As a developer's own RabbitMQ (rabbit@localhost, distribution port 25672) beside the
        // tests' node: with a shared name or port, the second node would not start.
        // Unchecked: appended to under its lock only, read after both threads are done.
        final class Started: @unchecked Sendable {
            let lock = NSLock()
            var results: [Result<RabbitMQ, Error>] = []
        }
        let box = Started()
        DispatchQueue.concurrentPerform(iterations: 2) { _ in
            let r = Result { try RabbitMQ() }
            box.lock.withLock { box.results.append(r) }
        }
        let started = box.results
        let brokers = started.compactMap { try? $0.get() }
        defer { for b in brokers { b.stop() } }
        for case .failure(let error) in started { Issue.record(error) }
        try #require(brokers.count == 2)
        for b in brokers {
            let r = try runProgram(URL(fileURLWithPath: "/usr/bin/timeout"),
                                   ["20", "amqp-publish", "--url=amqp://guest:guest@127.0.0.1:\(b.port)", "-e", "amq.topic", "-r", "side", "-b", "x"], timeout: 30)
            #expect(r.status == 0, "amqp-publish to 127.0.0.1:\(b.port): \(r.stderr)")
        }
    }

    @Test("every message published is dissected live with its exchange, routing key, delivery mode and size")
    func publish() throws {
        let broker = try RabbitMQ()
        defer { broker.stop() }
        let live = try LiveDissect(["-i", "lo", "--decode-as", "\(broker.port)=amqp", "-f", "tcp port \(broker.port)", "--format", "json"])
        let messages: [(key: String, body: String, persistent: Bool)] = [("alarm.5", "door open", true), ("alarm.7", "window", false)]
        for m in messages {
            var args = ["20", "amqp-publish", "--url=amqp://guest:guest@127.0.0.1:\(broker.port)", "-e", "amq.topic", "-r", m.key, "-b", m.body]
            if m.persistent { args.append("-p") }
            let r = try runProgram(URL(fileURLWithPath: "/usr/bin/timeout"), args, timeout: 30)
            #expect(r.status == 0, "amqp-publish: \(r.stderr)")
        }
        usleep(500_000)
        let (status, stdout, stderr) = live.finish(interrupt: true)
        #expect(status == 0, "\(stderr)")
        let frames = jsonLines(stdout).compactMap { $0["amqp"] as? [String: Any] }
        let publishes = frames.filter { $0["method"] as? String == "basic.publish" }
        let headers = frames.filter { $0["frame_type"] as? String == "header" }
        for (i, m) in messages.enumerated() {
            let args = publishes.first { ($0["arguments"] as? [String: Any])?["routing_key"] as? String == m.key }?["arguments"] as? [String: Any]
            #expect(args?["exchange"] as? String == "amq.topic", "no basic.publish for \(m.key) in \(stdout.prefix(3000))")
            guard i < headers.count else { Issue.record("missing content header for \(m.key)"); continue }
            #expect(headers[i]["body_size"] as? Int == m.body.utf8.count)
            let mode = (headers[i]["properties"] as? [String: Any])?["delivery_mode"] as? Int
            #expect(m.persistent ? mode == 2 : mode != 2, "delivery mode \(String(describing: mode)) for \(m.key)")
        }
        #expect(frames.contains { $0["method"] as? String == "connection.start-ok" })
        #expect(!stdout.contains("\\u0000guest\\u0000guest"), "the SASL response must be hidden")
        #expect(stdout.contains("<hidden>"))
    }
}
