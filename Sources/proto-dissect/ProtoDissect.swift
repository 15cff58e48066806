import AMQP
import AMQPViews
// Linked for its allocator alone, on Linux (Package.swift): libmimalloc replaces malloc and free
// for the whole process (docs/performance.md: fewer instructions per allocation than glibc's on
// this workload). Elsewhere the system's allocator stays.
#if os(Linux)
import CMimalloc
#endif
import ArgumentParser
import Capture
import Dissection
import MQTT
import MQTTViews
import Pipeline
import ProtoDissectKit
import Reassembly
import Render
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Exit statuses, documented in the README.
enum ExitStatus {
    static let success: Int32 = 0
    /// A capture could not be read, or was cut short.
    static let inputProblem: Int32 = 1
    static let usage: Int32 = 2
    /// Output could not be written: standard output (a full disk, say), or the `-w` file.
    static let outputProblem: Int32 = 3
}

/// `--mqtt-version`: 3.1, 3.1.1 or 5 (5.0 accepted too).
func parseMQTTVersion(_ text: String) -> MQTTVersion? {
    switch text {
    case "3.1": return .v3_1
    case "3.1.1": return .v3_1_1
    case "5", "5.0": return .v5
    default: return nil
    }
}

enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    case text, json, table
}

enum ColorChoice: String, ExpressibleByArgument, CaseIterable {
    case auto, always, never
}

@main
struct ProtoDissect: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "proto-dissect",
        abstract: "Dissect MQTT (3.1, 3.1.1, 5.0) and AMQP 0-9-1 traffic from captures or a live interface.",
        discussion: """
        EXAMPLES
          proto-dissect capture.pcap                      every MQTT/AMQP PDU, explained
          proto-dissect --format json capture.pcapng | jq 'select(.mqtt.type=="PUBLISH")'
          proto-dissect --format table capture.pcap       per-connection and per-topic summaries
          tcpdump -i lo -w - 'tcp port 1883' | proto-dissect -
          proto-dissect -f 'tcp port 1883 and host 10.0.0.5' -c 20 capture.pcap
          proto-dissect --decode-as 8883=mqtt --mqtt-version 5 midstream.pcap
          proto-dissect -i lo                             live, on the loopback interface

        Exit status: 0 success, 1 a capture could not be read or was cut short (what
        was read before is still printed), 2 usage error, 3 output could not be
        written (standard output, or the -w file). Problems found in the traffic do
        not change it.
        """)

    @Argument(help: ArgumentHelp("Capture files (pcap or pcapng); - reads standard input.", valueName: "FILE"))
    var files: [String] = []

    @Option(name: .customShort("r"), help: ArgumentHelp("Read this capture file (like tcpdump/tshark -r).", valueName: "FILE"))
    var readFiles: [String] = []

    @Option(name: [.short, .long], help: ArgumentHelp("Capture live from this interface (e.g. lo, any).", valueName: "IFACE"))
    var interface: String?

    @Option(name: .customShort("w"), help: ArgumentHelp("Live capture: also write the raw packets to this pcap file.", valueName: "FILE"))
    var writeFile: String?

    @Flag(name: [.customShort("D"), .customLong("list-interfaces")], help: "List the interfaces available for live capture.")
    var listInterfaces = false

    @Option(help: "Output format: text (annotated tree), json (one object per PDU per line), table (summaries).")
    var format: OutputFormat = .text

    @Option(name: [.short, .long], help: ArgumentHelp("Stop after N PDUs.", valueName: "N"))
    var count: Int?

    @Option(name: [.short, .long], help: ArgumentHelp("libpcap (BPF) filter, applied to files too.", valueName: "EXPR"))
    var filter: String?

    @Option(name: .customLong("decode-as"), help: ArgumentHelp("Decode a TCP port as a protocol, e.g. 8883=mqtt or 5673=amqp (repeatable).", valueName: "PORT=PROTO"))
    var decodeAs: [String] = []

    @Option(name: .customLong("mqtt-version"), help: ArgumentHelp("MQTT version to assume where the CONNECT was not captured: 3.1, 3.1.1 or 5.", valueName: "VERSION"))
    var mqttVersion: String?

    @Flag(name: .customLong("show-secrets"), help: "Show MQTT passwords and AMQP SASL responses instead of hiding them.")
    var showSecrets = false

    @Flag(name: .customLong("brief"), help: "Text format: summary lines only, no field trees.")
    var brief = false

    @Flag(name: .customLong("no-analysis"), help: "Do not follow MQTT QoS 1 and 2 message flows or AMQP acknowledgements and confirms (no flow notes, analysis records or flow tables).")
    var noAnalysis = false

    @Flag(name: [.customShort("2"), .customLong("two-pass")],
          help: "Read the captures twice, so that each MQTT PUBLISH names its acknowledgement and its deliveries, each AMQP publish its route and confirm, each delivery its acknowledgement (files only).")
    var twoPass = false

    @Option(help: "Colour in text output: auto (on a terminal), always, never.")
    var color: ColorChoice = .auto

    @Option(name: .customLong("payload-preview"), help: ArgumentHelp("Payload bytes kept for display per PDU.", valueName: "BYTES"))
    var payloadPreview: Int = 256

    @Option(name: .customLong("max-flows-in-flight"), help: ArgumentHelp("MQTT QoS 1 and 2 flows followed in flight per direction of a connection; later ones past it are not followed.", valueName: "N"))
    var maxFlowsInFlight: Int = 4096

    @Option(name: .customLong("max-pdu-bytes"), help: ArgumentHelp("Bytes of one PDU held for decoding; the rest of a larger one is counted and skipped.", valueName: "BYTES"))
    var maxPDUBytes: Int = 1 << 20

    @Option(name: .customLong("max-stream-buffer"), help: ArgumentHelp("Out-of-order bytes held per direction before a hole is given up.", valueName: "BYTES"))
    var maxStreamBuffer: Int = 4 << 20

    @Option(name: .customLong("max-total-buffer"), help: ArgumentHelp("Out-of-order bytes held over all connections.", valueName: "BYTES"))
    var maxTotalBuffer: Int = 64 << 20

    @Option(name: .customLong("max-connections"), help: ArgumentHelp("Connections tracked at once; the least recently active are flushed beyond it.", valueName: "N"))
    var maxConnections: Int = 65_536

    @Option(name: .customLong("hole-timeout"), help: ArgumentHelp("Seconds of capture time a hole in a stream may hold back later data before it is given up as a gap.", valueName: "SECONDS"))
    var holeTimeout: Double = 10

    @Option(name: .customLong("reorder-packets"), help: ArgumentHelp("Packets of a connection for which bytes the other side acknowledged are awaited (a capture out of causal order) before they are given up as a gap.", valueName: "N"))
    var reorderPackets: Int = 4096

    @Option(name: .customLong("reorder-timeout"), help: ArgumentHelp("Seconds of capture time for the same wait; whichever ends first ends it.", valueName: "SECONDS"))
    var reorderTimeout: Double = 3

    @Option(name: .customLong("max-table-rows"), help: ArgumentHelp("Table format: rows per table; the rest are summed in one line.", valueName: "N"))
    var maxTableRows: Int = 1000

    @Option(name: .customLong("threads"), help: ArgumentHelp("Threads that dissect a capture file, each owning whole connections (default: the cores online, at most 8); the output is the same for any number. 1 runs everything on one thread.", valueName: "N"))
    var threads: Int = min(availableCores(), 8)

    @Option(name: .customLong("idle-timeout"), help: ArgumentHelp("Seconds of capture time after which a silent connection is flushed.", valueName: "SECONDS"))
    var idleTimeout: Double = 300

    /// Parses, runs, and maps failures onto the documented exit statuses (ArgumentParser's own
    /// usage status is 64; ours is 2, as with tcpdump and grep).
    static func main() {
        #if os(Linux)
        // mimalloc gives the pages a run no longer uses back to the system after 1 ms instead of
        // its default 25 ms: the peak resident size stays nearer the heap's (bench JSON, two
        // workers: about 2 MB less, no measurable time; 0 ms costs a fifth more time in madvise
        // calls: docs/performance.md). The environment variable still decides.
        if getenv("MIMALLOC_DECOMMIT_DELAY") == nil { mi_option_set(mi_option_decommit_delay, 1) }
        #endif
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch {
            let code = exitCode(for: error)
            if code == .success {
                printLine(fullMessage(for: error))
                exit(withError: nil)
            }
            if code == .validationFailure {
                warn(fullMessage(for: error))
                exitProcess(ExitStatus.usage)
            }
            if let e = error as? ExitCode { exitProcess(e.rawValue) }
            warn(fullMessage(for: error))
            exitProcess(code.rawValue)
        }
    }

    func validate() throws {
        if let count, count <= 0 { throw ValidationError("-c/--count takes a positive number") }
        if let v = mqttVersion, parseMQTTVersion(v) == nil { throw ValidationError("--mqtt-version takes 3.1, 3.1.1 or 5, not '\(v)'") }
        for d in decodeAs {
            let parts = d.split(separator: "=")
            guard parts.count == 2, UInt16(parts[0]) != nil, ["mqtt", "amqp"].contains(parts[1].lowercased()) else {
                throw ValidationError("--decode-as takes PORT=mqtt or PORT=amqp, not '\(d)'")
            }
        }
        if !listInterfaces && interface == nil && files.isEmpty && readFiles.isEmpty {
            throw ValidationError("name a capture file (or - for standard input), or -i IFACE for live capture")
        }
        if writeFile != nil && interface == nil {
            throw ValidationError("-w writes what a live capture (-i) sees")
        }
        if interface != nil && !(files.isEmpty && readFiles.isEmpty) {
            throw ValidationError("-i reads live traffic; it cannot be combined with capture files")
        }
        if twoPass && (interface != nil || (readFiles + files).contains(where: { $0 == "-" || !isRereadable($0) })) {
            throw ValidationError("--two-pass reads the captures twice: it takes files, not live traffic, pipes or standard input")
        }
        if twoPass && noAnalysis { throw ValidationError("--two-pass links what the analysis finds; it cannot be combined with --no-analysis") }
        for (name, v) in [("--payload-preview", payloadPreview), ("--max-pdu-bytes", maxPDUBytes), ("--max-stream-buffer", maxStreamBuffer),
                          ("--max-total-buffer", maxTotalBuffer), ("--max-connections", maxConnections), ("--max-table-rows", maxTableRows),
                          ("--reorder-packets", reorderPackets), ("--threads", threads), ("--max-flows-in-flight", maxFlowsInFlight)] where v <= 0 {
            throw ValidationError("\(name) takes a positive number")
        }
        for (name, v) in [("--idle-timeout", idleTimeout), ("--hole-timeout", holeTimeout), ("--reorder-timeout", reorderTimeout)] where !(v > 0) {
            throw ValidationError("\(name) takes a positive number of seconds")
        }
    }

    /// The registry of the run's dissectors; `flowLinks` and `facts` for a pass of a run in two
    /// (`--two-pass`): the first counts facts (`.facts`) and writes the links, the second reads them.
    func makeRegistry(flowLinks: MQTTFlowLinking? = nil, amqpLinks: AMQPLinking? = nil, facts: Bool = false) -> ProtocolRegistry {
        var mqtt = MQTTOptions()
        mqtt.flowLinks = flowLinks
        mqtt.assumedVersion = mqttVersion.flatMap(parseMQTTVersion)
        mqtt.payloadPreviewBytes = payloadPreview
        mqtt.maxHeldPDUBytes = maxPDUBytes
        mqtt.analysis = !noAnalysis
        mqtt.maxFlowsInFlight = maxFlowsInFlight
        var amqp = AMQPOptions()
        amqp.analysis = !noAnalysis
        amqp.links = amqpLinks
        amqp.bodyPreviewBytes = payloadPreview
        amqp.maxHeldFrameBytes = maxPDUBytes
        // Only text and JSON print summary lines, and only text the tree's bit-by-bit lines.
        amqp.summaryDetail = format != .table
        amqp.textLines = format == .text
        mqtt.textLines = format == .text
        // Tables count facts only: the frequent PDUs skip their field trees.
        if format == .table {
            mqtt.detail = .facts
            amqp.detail = .facts
        }
        // Text shows the tree as lines: the frequent PDUs are written as lines straight away.
        if format == .text {
            mqtt.detail = .text
            amqp.detail = .text
        }
        if format == .json {
            mqtt.detail = .json
            amqp.detail = .json
        }
        if facts {
            mqtt.detail = .facts
            amqp.detail = .facts
        }
        var registry = CaptureDissection.standardRegistry(mqtt: mqtt, amqp: amqp)
        for d in decodeAs {
            let parts = d.split(separator: "=")
            if let port = UInt16(parts[0]) { _ = registry.assign(port: port, to: parts[1].lowercased()) }
        }
        return registry
    }

    func renderOptions() -> RenderOptions {
        let useColor: Bool
        switch color {
        case .always: useColor = true
        case .never: useColor = false
        case .auto: useColor = isatty(1) != 0 && getenv("NO_COLOR") == nil
        }
        return RenderOptions(showSecrets: showSecrets, color: useColor, showTree: !brief, maxTableRows: maxTableRows)
    }

    /// One line on standard error when a limit made the run drop data, so it is never silent.
    func reportLimits(_ s: PipelineStatistics, source: String) {
        var parts: [String] = []
        if s.droppedByLimits > 0 { parts.append("\(s.droppedByLimits) out-of-order bytes given up at the buffer limits or the hole timeout (--max-stream-buffer, --max-total-buffer, --hole-timeout)") }
        if s.flushedConnections > 0 { parts.append("\(s.flushedConnections) connections flushed early (--idle-timeout, --max-connections)") }
        if !parts.isEmpty { warn("\(source): " + parts.joined(separator: "; ")) }
    }

    mutating func run() throws {
        if listInterfaces {
            do {
                for (i, dev) in try LiveCapture.interfaces().enumerated() {
                    printLine("\(i + 1). \(dev.name)" + (dev.description.map { " (\($0))" } ?? ""))
                }
            } catch {
                warn("\(error)")
                throw ExitCode(ExitStatus.inputProblem)
            }
            return
        }
        var registry = makeRegistry()
        var packetFilter: PacketFilter?
        if let filter, interface == nil {
            do { packetFilter = try PacketFilter(expression: filter) } catch {
                warn("\(error)")
                throw ExitCode(ExitStatus.usage)
            }
        }
        let limits = ReassemblyLimits(maxBufferedBytesPerDirection: maxStreamBuffer, maxBufferedBytesTotal: maxTotalBuffer,
                                      maxConnections: maxConnections, idleTimeout: idleTimeout,
                                      holeTimeout: holeTimeout, reorderPackets: reorderPackets, reorderTimeout: reorderTimeout)
        // A table counts facts only: the frequent PDUs come as their facts, without boxes.
        let options = PipelineOptions(limits: limits, maxPDUs: count, filter: packetFilter, countedPDUs: format == .table)
        // A table counts the same in one pass or two: it is read once.
        if twoPass && format != .table {
            // The first pass: every capture dissected as a table would count it, what each MQTT
            // flow came to written into the links, nothing printed.
            let links = MQTTFlowLinks(), amqpLinks = AMQPLinks()
            var first = options
            first.maxPDUs = nil
            first.countedPDUs = true
            let tableOptions = renderOptions()
            let makeTable = { TableRenderer(options: tableOptions) }
            var table = makeTable()
            _ = readCaptures(registry: makeRegistry(flowLinks: .collect(links), amqpLinks: .collect(amqpLinks), facts: true), options: first,
                             analysis: SpanningAnalyses([MQTTBroker(links: links), AMQPBroker(links: amqpLinks)]), renderer: makeTable,
                             writer: OutputWriter(flushEachEvent: false, discarding: true), into: &table, maxPDUs: nil, quiet: true)
            registry = makeRegistry(flowLinks: .read(links), amqpLinks: .read(amqpLinks))
        }
        // The run is generic over the renderer's type and made for each one: rendering an event
        // is then a direct call, not a dispatch through an existential held in a closure's box.
        switch format {
        case .text: try dissect(with: { TextRenderer(options: renderOptions()) }, registry: registry, options: options)
        case .json: try dissect(with: { JSONRenderer(options: renderOptions()) }, registry: registry, options: options)
        case .table: try dissect(with: { TableRenderer(options: renderOptions()) }, registry: registry, options: options)
        }
    }

    /// Reads every capture (or the live interface) and renders it with renderers `make` makes:
    /// one, or one per worker when a file is shared out among `threads` workers
    /// (`Pipeline.runInWorkers`), merged into the first at the end of each file.
    private func dissect<R: Renderer>(with make: () -> R, registry: ProtocolRegistry, options: PipelineOptions) throws {
        var renderer = make()
        let writer = OutputWriter(flushEachEvent: interface != nil)
        var status = ExitStatus.success
        var pdusSoFar = 0
        // MQTT clients and the broker across connections (and captures): what they find comes
        // after the PDUs.
        let clients: SpanningAnalysis? = noAnalysis ? nil : SpanningAnalyses([MQTTClients(), MQTTBroker(), AMQPBroker()])

        if let interface {
            status = try runLive(interface: interface, registry: registry, options: options, analysis: clients, renderer: &renderer,
                                 writer: writer)
        } else {
            (status, pdusSoFar) = readCaptures(registry: registry, options: options, analysis: clients, renderer: make, writer: writer,
                                               into: &renderer, maxPDUs: count)
        }
        // A run cut short by -c has not seen how its clients went on.
        if let clients, count.map({ pdusSoFar < $0 }) ?? true {
            clients.finish { record in
                renderer.render(.analysis(record), into: &writer.sink)
                writer.eventDone()
            }
        }
        var summaries = ""
        renderer.finish(into: &summaries)
        writer.append(summaries)
        writer.flush()
        if status != ExitStatus.success { throw ExitCode(status) }
    }
}

extension ProtoDissect {
    /// Reads every capture file in turn with `registry`, rendering with `renderer` (`make` makes
    /// the other workers'), out through `writer`; the connections' numbers go on from one file to
    /// the next. Returns the run's exit status so far and the PDUs it made. `quiet`: no warnings
    /// (the first pass of a run in two, whose second pass gives them).
    func readCaptures<R: Renderer>(registry: ProtocolRegistry, options: PipelineOptions, analysis: SpanningAnalysis?,
                                   renderer make: () -> R, writer: OutputWriter, into renderer: inout R,
                                   maxPDUs count: Int?, quiet: Bool = false) -> (Int32, Int) {
        var status = ExitStatus.success
        var pdusSoFar = 0
        var streamsSoFar = 0
        var eventsSoFar = 0
        for path in readFiles + files {
            var opts = options
            opts.firstStream = streamsSoFar
            opts.firstEvent = eventsSoFar
            if let c = count { opts.maxPDUs = c - pdusSoFar }
            if let c = count, pdusSoFar >= c { break }
            let pipeline = Pipeline(registry: registry, options: opts)
            do {
                var reader = try CaptureFileReader(path: path)
                defer { reader.close() }
                do {
                    // A complete input is read on a thread of its own, in batches, and its
                    // connections shared out among the workers; a pipe (a capture still being
                    // written, `tcpdump -w - | proto-dissect -`) is read packet by packet on
                    // this thread, so nothing waits for a batch to fill.
                    try pipeline.runInWorkers(&reader, workers: reader.inputIsComplete ? threads : 1, renderer: &renderer,
                                              makeRenderer: make, analysis: analysis, into: &writer.sink) { sink in
                        writer.eventDone(&sink)
                        return true
                    }
                } catch let error as CaptureError {
                    writer.flush()
                    if !quiet { warn("warning: \(error)") }
                    status = ExitStatus.inputProblem
                }
            } catch {
                writer.flush()
                if !quiet { warn("\(error)") }
                status = ExitStatus.inputProblem
            }
            pdusSoFar += pipeline.statistics.pdus
            streamsSoFar += pipeline.statistics.connections
            eventsSoFar = pipeline.eventsRead
            if !quiet { reportLimits(pipeline.statistics, source: path == "-" ? "standard input" : path) }
        }
        return (status, pdusSoFar)
    }
}

/// Whether `path` can be read twice (`--two-pass`): a regular file, or one that cannot be looked
/// at (its opening then says what is wrong); not a pipe or a device.
func isRereadable(_ path: String) -> Bool {
    var s = stat()
    guard stat(path, &s) == 0 else { return true }
    return (s.st_mode & S_IFMT) == S_IFREG
}

/// Cores online (the dissecting threads' default).
func availableCores() -> Int {
    max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
}

/// The C library's exit, by a name of its own: inside a command `exit` is ArgumentParser's
/// `exit(withError:)` (and `Glibc.exit` exists on Linux only).
func exitProcess(_ status: Int32) -> Never {
    exit(status)
}
