import Capture
import Dissection
import Packets
import Reassembly

/// Settings of one run of the pipeline.
public struct PipelineOptions {
    public var limits: ReassemblyLimits
    /// Stop after this many PDUs (`-c`).
    public var maxPDUs: Int?
    /// A BPF filter applied to every packet (`-f`).
    public var filter: PacketFilter?
    /// The stream number of the first connection: a run over several captures continues the
    /// numbering from one capture to the next, so summaries never merge two connections.
    public var firstStream = 0
    /// The place of the first reassembly event in the whole run, likewise: what a run in workers
    /// tells its renderers (`EventRenderer.setPosition`) continues from one capture to the next.
    public var firstEvent = 0
    /// Whether the PDUs dissectors make with a facts view (`PDUDetail.facts`) are handed on
    /// as `OutputEvent.counted` (their facts as values, no box), not as `.pdu`: for a consumer
    /// that counts facts and nothing more, a table. Off by default.
    public var countedPDUs = false

    public init(limits: ReassemblyLimits = ReassemblyLimits(), maxPDUs: Int? = nil, filter: PacketFilter? = nil, firstStream: Int = 0,
                countedPDUs: Bool = false) {
        self.firstStream = firstStream
        self.countedPDUs = countedPDUs
        self.limits = limits
        self.maxPDUs = maxPDUs
        self.filter = filter
    }
}

/// Counters of a run, for the closing line and the tests.
public struct PipelineStatistics: Sendable, Equatable {
    public var packets = 0
    public var tcpSegments = 0
    public var pdus = 0
    public var problems = 0
    public var gapBytes = 0
    /// Out-of-order bytes given up because a buffering limit or the hole timeout was reached.
    public var droppedByLimits = 0
    /// Connections flushed before their end by the idle timeout or the connection limit.
    public var flushedConnections = 0
    public var connections = 0
}

/// Wires the stages together: packets → TCP segments → reassembled streams → protocol
/// dissectors → output events, in capture order. One pipeline reads one capture.
///
/// It has two halves: reading (packets, the filter, TCP reassembly) here, and dissecting
/// (`StreamStage`: each connection's dissector, PDUs, notes). `run` and `process` do both on the
/// caller's thread; `runConcurrently` reads on a second thread; `runInWorkers` reads on a second
/// thread and shares the connections out among workers.
public final class Pipeline {
    let registry: ProtocolRegistry
    let options: PipelineOptions
    // A pipeline is used from one thread, one call at a time (it is not Sendable), and nothing it
    // calls out to reaches back into these while they are being written: no runtime exclusivity
    // checks (a check per access per packet: callgrind, 6.8 MB MQTT capture, table 196M → 193M).
    @exclusivity(unchecked) var reassembler: TCPReassembler
    // Only `process` and `finish` use it, on the caller's thread; `read`, lent it, touches only its argument.
    @exclusivity(unchecked) private var events: [ReassemblyEvent] = []
    // Touched only in `read`, on the thread that reads the packets.
    @exclusivity(unchecked) private var reportedLinkTypes: Set<Int32> = []
    // Written in `read` and read after it, on the thread that reads the packets.
    @exclusivity(unchecked) var lastFrame = 0
    // Written in `read` and read after it, on the thread that reads the packets.
    @exclusivity(unchecked) var lastTime = Timestamp(seconds: 0, nanoseconds: 0)
    // Counted in `read` by the thread that reads the packets; `statistics` reads it after the run.
    @exclusivity(unchecked) var packets = 0
    // Counted in `read` by the thread that reads the packets; `statistics` reads it after the run.
    @exclusivity(unchecked) var tcpSegments = 0
    /// Reassembly events made so far, from `options.firstEvent` on.
    // Written by the thread that reads the packets; others read it only once the run has returned.
    @exclusivity(unchecked) public internal(set) var eventsRead = 0
    /// The dissecting half.
    let stage: StreamStage
    /// The other workers' dissecting halves, in a run in workers (`runInWorkers`).
    // Set and read on the caller's thread only; the workers reach their stages through `Worker`.
    @exclusivity(unchecked) var workerStages: [StreamStage] = []
    /// Packets per batch of a concurrent run (`batchPackets`), and batches in flight in a run in
    /// workers (`batchesInFlightInWorkers`): tests make both small, so threads wait on each other often.
    // Set only before a run (by tests); during it, only the reading thread reads it.
    @exclusivity(unchecked) var batchPacketLimit = Pipeline.batchPackets
    // Set only before a run (by tests); read once, on the caller's thread, as `runInWorkers` begins.
    @exclusivity(unchecked) var batchesInFlightInWorkers = Pipeline.batchesInFlightInWorkers

    /// Counters of the run so far (of a concurrent run: once it has returned).
    public var statistics: PipelineStatistics {
        var s = PipelineStatistics()
        s.packets = packets
        s.tcpSegments = tcpSegments
        for stage in [stage] + workerStages {
            s.pdus += stage.pduCount
            s.problems += stage.problemCount
            s.gapBytes += stage.gapBytes
            s.connections += stage.connections
        }
        s.droppedByLimits = reassembler.droppedByLimits
        s.flushedConnections = reassembler.flushedConnections
        return s
    }

    public init(registry: ProtocolRegistry, options: PipelineOptions = PipelineOptions()) {
        self.registry = registry
        self.options = options
        let reg = registry
        self.reassembler = TCPReassembler(limits: options.limits, firstStream: options.firstStream, isServerPort: { reg.isAssigned(port: $0) })
        self.stage = StreamStage(registry: registry, maxPDUs: options.maxPDUs, countedPDUs: options.countedPDUs)
        self.eventsRead = options.firstEvent
    }

    /// True once `-c` is reached (or the consumer asked to stop).
    public var isStopped: Bool { stage.stopped }

    /// Reads `source` to its end (or until stopped), handing each event to `emit`.
    /// Returning false from `emit` stops the run. A `CaptureError` thrown by the source is
    /// rethrown after what was decoded before it has been emitted and flushed.
    public func run<S: PacketSource>(_ source: inout S, emit: (OutputEvent) -> Bool) throws {
        var failure: Error?
        var packet = CapturedPacket.empty
        while !stage.stopped {
            let more: Bool
            do { more = try source.next(into: &packet) } catch {
                failure = error
                break
            }
            guard more else { break }
            process(packet, emit: emit)
        }
        finish(emit: emit)
        if let failure { throw failure }
    }

    /// Feeds one captured packet.
    public func process(_ packet: CapturedPacket, emit: (OutputEvent) -> Bool) {
        events.removeAllEvents()
        switch read(packet, into: &events) {
        case .none:
            return
        case .note(let note):
            stage.send(note, emit)
        case .events:
            eventsRead += events.count
            stage.handle(events[...], frame: packet.number, time: lastTime, emit: emit)
        }
    }

    /// What the reading half made of one packet.
    enum ReadResult {
        /// Nothing for the dissectors (not TCP, not a protocol's port, filtered out).
        case none
        /// A note about the capture (a malformed or unsupported packet).
        case note(OutputEvent)
        /// Reassembly events, appended to the array given.
        case events
    }

    /// The reading half: one packet through the filter, the packet decoder and reassembly.
    func read(_ packet: CapturedPacket, into events: inout [ReassemblyEvent]) -> ReadResult {
        packets += 1
        if let filter = options.filter, !filter.matches(packet) { return .none }
        let time = Timestamp(seconds: packet.seconds, nanoseconds: packet.nanoseconds,
                             fractionalDigits: packet.precision.fractionalDigits)
        lastFrame = packet.number
        lastTime = time
        let linkType = LinkType(rawValue: packet.linkType)
        switch PacketDecoder.decode(linkType: linkType, bytes: packet.bytes[...]) {
        case .other:
            return .none
        case .problem(let issue):
            if issue.kind == .unsupportedLinkType {
                guard reportedLinkTypes.insert(packet.linkType).inserted else { return .none }
                return .note(.captureNote(Problem(.warning, ProblemCode(rawValue: issue.kind.rawValue),
                    "frame \(packet.number): \(linkType) is not supported; packets of this link type are skipped")))
            }
            return .note(.captureNote(Problem(.warning, ProblemCode(rawValue: issue.kind.rawValue), "frame \(packet.number): \(issue.message)")))
        case .tcp(let segment):
            guard registry.isAssigned(port: segment.destination.port) || registry.isAssigned(port: segment.source.port) else { return .none }
            tcpSegments += 1
            reassembler.process(segment, time: time.timeInterval,
                                origin: CaptureOrigin(frame: packet.number, seconds: packet.seconds, nanoseconds: packet.nanoseconds),
                                into: &events)
            return .events
        }
    }

    /// Flushes every connection (end of input): what it completes is attributed to the last frame read.
    public func finish(emit: (OutputEvent) -> Bool) {
        events.removeAllEvents()
        reassembler.flushAll(into: &events)
        eventsRead += events.count
        stage.finish(events[...], frame: lastFrame, time: lastTime, emit: emit)
    }
}
