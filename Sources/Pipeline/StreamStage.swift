import Dissection
import Packets
import Reassembly

/// The second half of the pipeline: reassembly events → each connection's dissector → output
/// events. It holds the connections' dissectors and nothing of the reading half, so it can run
/// on a thread of its own (`Pipeline.runConcurrently`).
final class StreamStage {
    private let registry: ProtocolRegistry
    private let maxPDUs: Int?
    /// Whether the frequent PDUs go out as `.counted` events (`PipelineOptions.countedPDUs`).
    private let countedPDUs: Bool
    // Used from one thread, one call at a time; nothing it calls out to reaches back into these
    // while they are being written: no runtime exclusivity checks.
    @exclusivity(unchecked) private var streams = IntTable<StreamState>()
    // The stage's thread alone; lent to a dissector, which cannot reach the stage, and read between calls.
    @exclusivity(unchecked) private var pdus: [DissectedPDU] = []
    /// A segment's PDUs when they go out counted (`countedPDUs`).
    // The stage's thread alone; lent to a dissector in `receiveCounted`, read in `emitBatch` after it.
    @exclusivity(unchecked) private var batch = PDUBatch()
    /// Analysis records a dissector hands over, before they are emitted.
    // The stage's thread alone; lent to a dissector in `emitRecords`, emptied there.
    @exclusivity(unchecked) private var records: [AnalysisRecord] = []
    /// True once `maxPDUs` is reached or `emit` returned false: no more PDUs are emitted.
    // The stage's thread alone, with plain loads and stores: no access to it lasts across `emit`.
    @exclusivity(unchecked) var stopped = false
    /// True once `maxPDUs` is reached: the capture was not read to its end, so what connections
    /// leave open is not reported (their closes come from the flush, not from the traffic).
    // The stage's thread alone, with plain loads and stores.
    @exclusivity(unchecked) private var limitReached = false
    // Counted by the stage's thread; `Pipeline.statistics` reads it only once that thread is done.
    @exclusivity(unchecked) private(set) var pduCount = 0
    // Counted by the stage's thread; `Pipeline.statistics` reads it only once that thread is done.
    @exclusivity(unchecked) private(set) var problemCount = 0
    // Counted by the stage's thread; `Pipeline.statistics` reads it only once that thread is done.
    @exclusivity(unchecked) private(set) var gapBytes = 0
    // Counted by the stage's thread; `Pipeline.statistics` reads it only once that thread is done.
    @exclusivity(unchecked) private(set) var connections = 0

    /// A class, so the dissector is mutated where it is stored: a struct copied out of
    /// `streams` and back would share the existential's box and copy the whole dissector per call.
    ///
    /// The dissector, the endpoints' objects and their text are made when first needed, not when
    /// the connection opens: a connection that carries no byte (a half-open one, of which a
    /// capture can hold tens of thousands at once) holds none of them until it ends.
    final class StreamState {
        // One thread, one access at a time: no runtime exclusivity checks.
        /// Made at the connection's first bytes, gap or end (`StreamStage.makeDissector(of:)`);
        /// until then a stand-in that holds nothing (not an optional: unwrapping one per segment
        /// copied the existential in and out).
        // Reached only through its stage, on the stage's thread; a dissector's call cannot reach its state.
        @exclusivity(unchecked) var dissector: any StreamDissector = NotYetMade()
        // Set once in `makeDissector`, then only read, on the stage's thread.
        @exclusivity(unchecked) var hasDissector = false
        let info: ConnectionInfo
        let protocolName: String
        let client: Endpoint
        let server: Endpoint
        /// The endpoints of each direction's contexts (`endpoints(_:)`).
        // Written once by `makeEndpoints`, then only read by `endpoints`, on the stage's thread.
        @exclusivity(unchecked) private var toServer: StreamEndpoints?
        // Written once by `makeEndpoints`, then only read by `endpoints`, on the stage's thread.
        @exclusivity(unchecked) private var toClient: StreamEndpoints?
        let firstSeen: Timestamp
        // Written per segment and read at the close, with plain loads and stores on the stage's thread.
        @exclusivity(unchecked) var lastSeen: Timestamp
        // Counted per segment and read at the close, with plain loads and stores on the stage's thread.
        @exclusivity(unchecked) var bytesToServer = 0
        // Counted per segment and read at the close, with plain loads and stores on the stage's thread.
        @exclusivity(unchecked) var bytesToClient = 0
        /// Whether its segments go through the batch (`countedPDUs`, and the dissector makes
        /// counted PDUs): set when the dissector is made.
        // Set once in `makeDissector`, then only read, on the stage's thread.
        @exclusivity(unchecked) var counts = false
        /// Whether the dissector analyses sequences of PDUs (`StreamDissector.analyses`): set
        /// when the dissector is made.
        // Set once in `makeDissector`, then only read, on the stage's thread.
        @exclusivity(unchecked) var analyses = false
        /// Where the segment being delivered was recorded, when reassembly held it back
        /// (`ReassemblyEvent.recordedAt`): what it completes is attributed to it.
        // Set by a `recordedAt` event and read by `attributed`, both on the stage's thread.
        @exclusivity(unchecked) var origin: CaptureOrigin?

        /// Where an event of this connection is attributed: the packet at hand (`frame`, `now`),
        /// or `origin` while a held-back segment is delivered (printed with `now`'s precision).
        @inline(__always)
        func attributed(_ frame: Int, _ now: Timestamp) -> (Int, Timestamp) {
            guard let origin else { return (frame, now) }
            return (origin.frame, Timestamp(seconds: origin.seconds, nanoseconds: origin.nanoseconds, fractionalDigits: now.fractionalDigits))
        }

        init(info: ConnectionInfo, protocolName: String, client: Endpoint, server: Endpoint, firstSeen: Timestamp) {
            self.info = info
            self.protocolName = protocolName
            self.client = client
            self.server = server
            self.firstSeen = firstSeen
            self.lastSeen = firstSeen
        }

        /// The endpoints of the direction's contexts, made once (both directions at once).
        @inline(__always)
        func endpoints(_ direction: Direction) -> StreamEndpoints {
            if direction == .toServer, let made = toServer { return made }
            if direction == .toClient, let made = toClient { return made }
            return makeEndpoints(direction)
        }

        @inline(never)
        private func makeEndpoints(_ direction: Direction) -> StreamEndpoints {
            let client = client.description, server = server.description
            let toServer = StreamEndpoints(source: client, destination: server)
            let toClient = StreamEndpoints(source: server, destination: client)
            self.toServer = toServer
            self.toClient = toClient
            return direction == .toServer ? toServer : toClient
        }
    }

    /// A connection's dissector before it is made: never called.
    private struct NotYetMade: StreamDissector {
        mutating func receive(_ bytes: ArraySlice<UInt8>, from direction: Direction, into output: inout [DissectedPDU]) {
            preconditionFailure("a connection's dissector is made before it is used")
        }
        mutating func gap(_ count: Int, in direction: Direction, into output: inout [DissectedPDU]) {
            preconditionFailure("a connection's dissector is made before it is used")
        }
        mutating func finish(_ direction: Direction, into output: inout [DissectedPDU]) {
            preconditionFailure("a connection's dissector is made before it is used")
        }
    }

    /// PDUs made from a segment before they are emitted: at most what the PDU pool keeps, so a
    /// segment of thousands of small PDUs reuses a part's boxes for the next part.
    static let pdusAtOnce = DissectedPDU.pooledBoxes

    init(registry: ProtocolRegistry, maxPDUs: Int?, countedPDUs: Bool = false) {
        self.registry = registry
        self.maxPDUs = maxPDUs
        self.countedPDUs = countedPDUs
    }

    /// Emits an event, noting a stop asked by `emit`.
    func send(_ event: OutputEvent, _ emit: (OutputEvent) -> Bool) {
        if !emit(event) { stopped = true }
    }

    /// Dissects what one packet (or the end of input) produced: `events`, attributed to `frame`
    /// at `time`.
    func handle(_ events: ArraySlice<ReassemblyEvent>, frame: Int, time: Timestamp, emit: (OutputEvent) -> Bool) {
        for event in events {
            switch event {
            case .opened(let stream, let client, let server, let midStream):
                let name = registry.protocolName(forPort: server.port) ?? registry.protocolName(forPort: client.port) ?? ""
                // Its dissector is made when first needed (`dissector(of:)`), by the same factory.
                guard registry.hasDissector(named: name) else { continue }
                connections += 1
                streams[stream] = StreamState(info: ConnectionInfo(startedMidStream: midStream, serverPort: server.port, stream: stream),
                                              protocolName: name, client: client, server: server, firstSeen: time)
            case .data(let stream, let side, let bytes):
                guard let state = streams[stream] else { continue }
                let (frame, time) = state.attributed(frame, time)
                makeDissector(of: state)
                let direction: Direction = side == .clientToServer ? .toServer : .toClient
                if direction == .toServer { state.bytesToServer += bytes.count } else { state.bytesToClient += bytes.count }
                state.lastSeen = time
                if state.analyses { state.dissector.locate(frame: frame, time: time) }
                if state.counts {
                    receiveCounted(bytes, state, stream: stream, direction: direction, frame: frame, time: time, emit: emit)
                    if state.analyses { emitRecords(state, stream: stream, direction: direction, frame: frame, time: time, emit: emit) }
                    continue
                }
                DissectedPDU.recycle(&pdus)
                var more = state.dissector.receive(bytes, from: direction, into: &pdus, limit: Self.pdusAtOnce)
                emitPDUs(state, stream: stream, direction: direction, frame: frame, time: time, emit: emit)
                // A segment of many PDUs, a part at a time: the boxes of one part are reused for
                // the next. The whole segment is dissected even after a stop (as when its PDUs
                // were made at once), so nothing of it is left in the framer for a later flush.
                while more {
                    DissectedPDU.recycle(&pdus)
                    more = state.dissector.receiveMore(from: direction, into: &pdus, limit: Self.pdusAtOnce)
                    emitPDUs(state, stream: stream, direction: direction, frame: frame, time: time, emit: emit)
                }
                if state.analyses { emitRecords(state, stream: stream, direction: direction, frame: frame, time: time, emit: emit) }
            case .gap(let stream, let side, let count, let reason):
                guard let state = streams[stream] else { continue }
                let (frame, time) = state.attributed(frame, time)
                let direction: Direction = side == .clientToServer ? .toServer : .toClient
                gapBytes += count
                let context = self.context(state, direction, frame: frame, time: time, stream: stream)
                send(.streamNote(context, Problem(.warning, .gap, "\(count) bytes missing from the capture (\(reason.rawValue))")), emit)
                DissectedPDU.recycle(&pdus)
                makeDissector(of: state)
                if state.analyses { state.dissector.locate(frame: frame, time: time) }
                state.dissector.gap(count, in: direction, into: &pdus)
                emitPDUs(state, stream: stream, direction: direction, frame: frame, time: time, emit: emit)
                if state.analyses { emitRecords(state, stream: stream, direction: direction, frame: frame, time: time, emit: emit) }
            case .overlapConflict(let stream, let side, let count):
                guard let state = streams[stream] else { continue }
                let (frame, time) = state.attributed(frame, time)
                let direction: Direction = side == .clientToServer ? .toServer : .toClient
                let context = self.context(state, direction, frame: frame, time: time, stream: stream)
                send(.streamNote(context, Problem(.warning, .overlapConflict,
                    "a retransmission carries \(count) bytes that differ from those first seen; the first copy was kept")), emit)
            case .ended(let stream, let side):
                guard let state = streams[stream] else { continue }
                let (frame, time) = state.attributed(frame, time)
                let direction: Direction = side == .clientToServer ? .toServer : .toClient
                DissectedPDU.recycle(&pdus)
                makeDissector(of: state)
                if state.analyses { state.dissector.locate(frame: frame, time: time) }
                state.dissector.finish(direction, into: &pdus)
                emitPDUs(state, stream: stream, direction: direction, frame: frame, time: time, emit: emit)
                if state.analyses { emitRecords(state, stream: stream, direction: direction, frame: frame, time: time, emit: emit) }
            case .recordedAt(let stream, let origin):
                streams[stream]?.origin = origin
            case .closed(let stream, let reason):
                guard let state = streams.removeValue(forKey: stream) else { continue }
                let (frame, time) = state.attributed(frame, time)
                if reason == .connectionLimit || reason == .idle {
                    let context = self.context(state, .toServer, frame: frame, time: time, stream: stream)
                    send(.streamNote(context, Problem(.note, .flushed, "connection flushed: \(reason.rawValue)")), emit)
                }
                let endpoints = state.endpoints(.toServer)
                var analysis: ConnectionAnalysis?
                if state.analyses && !limitReached {
                    let context = self.context(state, .toServer, frame: frame, time: time, stream: stream)
                    state.dissector.locate(frame: frame, time: time)
                    analysis = state.dissector.end(reason.rawValue) { sendRecord($0, at: context, emit) }
                }
                var summary = ConnectionSummary(
                    stream: stream, client: endpoints.source, server: endpoints.destination, protocolName: state.protocolName,
                    firstSeen: state.firstSeen, lastSeen: state.lastSeen, bytesToServer: state.bytesToServer,
                    bytesToClient: state.bytesToClient, closeReason: reason.rawValue)
                summary.flows = analysis?.flows
                summary.ending = analysis?.ending
                send(.connectionClosed(summary), emit)
            }
        }
    }

    /// Dissects the events of the end of input (every connection flushed): PDUs they complete
    /// are emitted even after a stop asked by `emit`, but not past `maxPDUs`.
    func finish(_ events: ArraySlice<ReassemblyEvent>, frame: Int, time: Timestamp, emit: (OutputEvent) -> Bool) {
        let wasStopped = stopped
        stopped = false // let the flush emit what completes
        handle(events, frame: frame, time: time, emit: emit)
        stopped = wasStopped || stopped
    }

    private func context(_ state: StreamState, _ direction: Direction, frame: Int, time: Timestamp, stream: Int) -> StreamContext {
        StreamContext(frame: frame, time: time, stream: stream, endpoints: state.endpoints(direction))
    }

    /// Makes the connection's dissector if it has none yet (the registry's factory for its
    /// protocol, given what was known at its start: made later, it is made the same).
    @inline(__always)
    private func makeDissector(of state: StreamState) {
        guard !state.hasDissector else { return }
        let dissector = registry.makeDissector(named: state.protocolName, info: state.info)!
        state.counts = countedPDUs && dissector.makesCountedPDUs
        state.analyses = dissector.analyses
        state.dissector = dissector
        state.hasDissector = true
    }

    /// The `.data` case's dissecting, into the batch: the frequent PDUs go out as `.counted` events.
    private func receiveCounted(_ bytes: ArraySlice<UInt8>, _ state: StreamState, stream: Int, direction: Direction,
                                frame: Int, time: Timestamp, emit: (OutputEvent) -> Bool) {
        batch.removeAll()
        var more = state.dissector.receive(bytes, from: direction, into: &batch, limit: Self.pdusAtOnce)
        emitBatch(state, stream: stream, direction: direction, frame: frame, time: time, emit: emit)
        while more {
            batch.removeAll()
            more = state.dissector.receiveMore(from: direction, into: &batch, limit: Self.pdusAtOnce)
            emitBatch(state, stream: stream, direction: direction, frame: frame, time: time, emit: emit)
        }
    }

    /// `emitPDUs` for the batch: each run of counted PDUs between two boxes as one `.counted`
    /// event (cut at `maxPDUs`), each box as its `.pdu` event.
    private func emitBatch(_ state: StreamState, stream: Int, direction: Direction, frame: Int, time: Timestamp,
                           emit: (OutputEvent) -> Bool) {
        guard batch.count > 0 else { return }
        let context = self.context(state, direction, frame: frame, time: time, stream: stream)
        var start = 0
        var box = 0
        while true {
            if stopped { return }
            let end = box < batch.full.count ? batch.boxPlaces[box] : batch.counted.count
            if start < end {
                var runEnd = end
                if let max = maxPDUs, pduCount + (end - start) >= max {
                    runEnd = start + Swift.max(max - pduCount, 0)
                    stopped = true
                    limitReached = true
                }
                if start < runEnd {
                    pduCount += runEnd - start
                    if !emit(.counted(CountedPDUs(context, direction, protocolName: batch.protocolName, batch.counted[start..<runEnd]))) {
                        stopped = true
                    }
                }
                if stopped { return }
            }
            start = end
            guard box < batch.full.count else { return }
            emitBox(batch.full[box], context: context, direction: direction, emit: emit)
            box += 1
        }
    }

    /// Emits the analysis records the connection's dissector found in what it was just given,
    /// placed where that was captured.
    private func emitRecords(_ state: StreamState, stream: Int, direction: Direction, frame: Int, time: Timestamp,
                             emit: (OutputEvent) -> Bool) {
        state.dissector.takeRecords(into: &records)
        guard !records.isEmpty else { return }
        let context = self.context(state, direction, frame: frame, time: time, stream: stream)
        for record in records { sendRecord(record, at: context, emit) }
        records.removeAll(keepingCapacity: true)
    }

    /// Emits an analysis record placed at `context`, unless stopped.
    private func sendRecord(_ record: AnalysisRecord, at context: StreamContext, _ emit: (OutputEvent) -> Bool) {
        guard !stopped else { return }
        var record = record
        record.context = context
        send(.analysis(record), emit)
    }

    private func emitPDUs(_ state: StreamState, stream: Int, direction: Direction, frame: Int, time: Timestamp, emit: (OutputEvent) -> Bool) {
        guard !pdus.isEmpty else { return }
        let context = self.context(state, direction, frame: frame, time: time, stream: stream)
        for pdu in pdus {
            if stopped { return }
            emitBox(pdu, context: context, direction: direction, emit: emit)
        }
    }

    /// Emits one PDU's box as its `.pdu` event, unless `maxPDUs` is reached (then stops).
    @inline(__always)
    private func emitBox(_ pdu: DissectedPDU, context: StreamContext, direction: Direction, emit: (OutputEvent) -> Bool) {
        if let max = maxPDUs, pduCount >= max {
            stopped = true
            limitReached = true
            return
        }
        pduCount += 1
        problemCount += pdu.problemCount
        send(.pdu(context, direction, pdu), emit)
        if let max = maxPDUs, pduCount >= max {
            stopped = true
            limitReached = true
        }
    }
}
