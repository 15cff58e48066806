import Capture
import Dissection
import Reassembly

/// Renders one event into the bytes given.
public typealias LaneRenderer = (OutputEvent, inout ByteSink) -> Void

/// Called on the second lane's thread after it dissected a batch, with the connections that
/// leave it after the batch and whether the batch is the input's last: bytes written here come
/// after the batch's events, before the connections change lanes (a table's sums of them).
public typealias LaneBatchEnd = (_ leaving: [Int], _ isLast: Bool, inout ByteSink) -> Void

/// A connection changing lanes: after the batch that carries it, lane `to` dissects it.
struct LaneMigration {
    let stream: Int
    let to: UInt8
}

extension Pipeline {
    /// Batches in flight in a run in lanes: more than `batchesInFlight`, so that when the
    /// caller's lane is the busier for a while, the reading thread (whose lane dissects a batch
    /// after reading it) can read ahead instead of waiting. Bench capture, text, best and median
    /// of 10 runs taken in turn: 4 batches 0.50 and 0.51 s, 16 batches 0.45 and 0.47 s (32: no
    /// better); peak 26.4 -> 29.5 MB with 64 chunks, 27.7 MB with 32.
    static let batchesInFlightInLanes = 16

    /// Like `runConcurrently`, with the dissecting shared between the two threads: the
    /// connections are dealt to two lanes. Lane 1 is dissected on the reading thread, a batch at
    /// a time once the batch is handed over, and rendered there by `secondLane` into bytes of its
    /// own; lane 0 is dissected on the caller's thread and rendered by `render` straight into
    /// `sink`, where lane 1's bytes are copied in their place as they come. `sink` gets the same bytes, in the
    /// same order, as one renderer would write from `runConcurrently`, for renderers whose output
    /// for an event depends on that event alone (text and JSON; not a table, which sums every
    /// connection). After each event of lane 0, and after each piece of lane 1's bytes copied
    /// in (what one reassembly event rendered, or up to a chunk of it), `eventDone` may write
    /// `sink` out and empty it; returning false stops the run there, as `emit` returning false
    /// does (lane 1's bytes arrive rendered, so a stop falls between pieces, not between PDUs).
    ///
    /// Each connection is dissected by one lane at a time. Connections are dealt out as they
    /// open; when one thread keeps waiting for the other, a connection that rendered about the
    /// difference lately moves to the other lane, its dissector handed over whole between two
    /// batches. Lane 1's bytes come back in a fixed number of chunks (`LaneChunks`), so memory
    /// stays flat however far the reading thread runs ahead. With `maxPDUs` set, this is `run`.
    ///
    /// `secondLaneBatchEnd`, when given, is called after each batch lane 1 dissected (see
    /// `LaneBatchEnd`); what it writes is copied into `sink` after the batch's events.
    public func runInLanes<S: PacketSource>(_ source: inout S, into sink: inout ByteSink,
                                            render: LaneRenderer, secondLane: @escaping LaneRenderer,
                                            secondLaneBatchEnd: LaneBatchEnd? = nil,
                                            eventDone: (inout ByteSink) -> Bool) throws {
        try runInLanes(&source, into: &sink, render: render, secondLane: secondLane, secondLaneBatchEnd: secondLaneBatchEnd,
                       balancing: .byWaits, eventDone: eventDone)
    }

    /// `runInLanes`, with the connections moved as `balancing` says (tests move them often).
    func runInLanes<S: PacketSource>(_ source: inout S, into sink: inout ByteSink,
                                     render: LaneRenderer, secondLane: @escaping LaneRenderer,
                                     secondLaneBatchEnd: LaneBatchEnd? = nil,
                                     balancing: LaneBalancer.Policy, eventDone: (inout ByteSink) -> Bool) throws {
        guard options.maxPDUs == nil else {
            return try run(&source) { event in
                render(event, &sink)
                return eventDone(&sink)
            }
        }
        let queues = RoundTrip<Batch>(batches: batchesInFlightInLanes)
        let lane = SecondLane(stage: StreamStage(registry: registry, maxPDUs: nil, countedPDUs: options.countedPDUs), render: secondLane, batchEnd: secondLaneBatchEnd)
        var failure: Error?
        try withUnsafeMutablePointer(to: &source) { pointer in
            let reading = SourcePointer(pointer)
            guard let reader = WorkerThread({ failure = self.readAll(reading.pointer, into: queues, lanes: lane) }) else {
                return try run(&pointer.pointee) { event in
                    render(event, &sink)
                    return eventDone(&sink)
                }
            }
            laneStage = lane.stage
            var balancer = LaneBalancer(policy: balancing)
            while true {
                let batch = queues.nextFilled()
                if !stage.stopped {
                    dissect(batch, lane: lane, balancer: &balancer, into: &sink, render: render, eventDone: eventDone)
                    if stage.stopped {
                        queues.stop()
                        lane.stop()
                    }
                }
                // What the lane still has of this batch: what it wrote at the batch's end (for a
                // `secondLaneBatchEnd`), then its end; the rest of what it had, when stopped.
                while true {
                    let kind = lane.chunks.pop { bytes in
                        guard !stage.stopped else { return }
                        sink.append(bytes: bytes)
                        if !eventDone(&sink) { stage.stopped = true }
                    }
                    if kind == .batchEnd { break }
                }
                if stage.stopped, !lane.stopped {
                    queues.stop()
                    lane.stop()
                }
                if !stage.stopped {
                    // Connections leaving lane 0 are handed over; those coming were handed
                    // over before the batch was.
                    laneMoves += batch.migrations.count
                    for move in batch.migrations {
                        if move.to == 1 {
                            lane.handoff.give(move.stream, stage.removeStream(move.stream), to: 1)
                        } else if let state = lane.handoff.take(move.stream, lane: 0, unlessStopped: lane) {
                            stage.adoptStream(move.stream, state)
                        }
                    }
                    // The reading thread waits for free batches and chunks, this one for
                    // batches and chunks handed over.
                    let batches = queues.waited(), chunks = lane.chunks.waited()
                    let waited = (reader: batches.producer &+ chunks.producer, dissector: batches.consumer &+ chunks.consumer)
                    let share = balancer.newConnectionShare
                    if let move = balancer.batchDone(batch, waited: waited, laneOneDissected: lane.dissected) {
                        lane.request(move)
                    }
                    if balancer.newConnectionShare != share { lane.setNewConnectionShare(balancer.newConnectionShare) }
                }
                let last = batch.isLast
                queues.giveBack(batch)
                if last { break }
            }
            reader.join()
        }
        if let failure { throw failure }
    }

    /// Lane 0's part of a batch, on the caller's thread: its events dissected here, lane 1's
    /// copied from its chunks, all in order.
    private func dissect(_ batch: Batch, lane: SecondLane, balancer: inout LaneBalancer, into sink: inout ByteSink,
                         render: LaneRenderer, eventDone: (inout ByteSink) -> Bool) {
        let events = batch.events
        let lanes = batch.lanes
        batch.forEachEvent({ i, frame, time in
            let stream = events[i].stream
            if lanes[i] == 0 {
                var written = 0
                stage.handle(events[i...i], frame: frame, time: time) { event in
                    let before = sink.bytes.count
                    render(event, &sink)
                    // An event that writes nothing (a table's, counted as it comes) weighs one a PDU.
                    var weight = 1
                    if case .counted(let run) = event { weight = run.pdus.count }
                    written += max(sink.bytes.count - before, weight)
                    return eventDone(&sink)
                }
                balancer.add(written, stream: stream, lane: 0)
            } else {
                balancer.add(copyLaneEvent(from: lane.chunks, into: &sink, eventDone: eventDone), stream: stream, lane: 1)
            }
            return !stage.stopped
        }, note: { note in
            stage.send(note) { event in
                render(event, &sink)
                return eventDone(&sink)
            }
            return !stage.stopped
        })
    }

    /// Appends the bytes the second lane made of its next event; returns how many.
    private func copyLaneEvent(from chunks: LaneChunks, into sink: inout ByteSink, eventDone: (inout ByteSink) -> Bool) -> Int {
        var count = 0
        while true {
            let kind = chunks.pop { bytes in
                count += bytes.count
                guard !stage.stopped else { return }
                sink.append(bytes: bytes)
                // After each piece: the sink is written out as it fills, however long the event.
                if !eventDone(&sink) { stage.stopped = true }
            }
            if kind == .eventEnd { break }
            precondition(kind == .piece, "the second lane ended its batch before an event of it")
        }
        return count
    }
}
