import Synchronization

/// Connections' states on their way from one lane to the other.
// Unchecked: its parcels are under a `Mutex`; its parkings and counter are thread-safe.
final class StreamHandoff: @unchecked Sendable {
    // Unchecked: a connection's state is handed whole from one lane's thread to the other, and
    // only the taker touches it afterwards.
    private final class Parcel: @unchecked Sendable {
        let state: StreamStage.StreamState?
        init(_ state: StreamStage.StreamState?) { self.state = state }
    }

    private let parcels = Mutex<[Int: Parcel]>([:])
    /// Where each lane's thread waits for a state given to it: one each, as a `Parking` has one
    /// sleeper at most (both threads can wait for a state at once when a batch moves
    /// connections both ways).
    private let parkings = [Parking(), Parking()]
    /// Bumped at each give and at a stop, for the takers' waits.
    private let changes = Atomic<Int>(0)

    /// The giving lane, once it is done with the batch after which `stream` moves to `lane`.
    func give(_ stream: Int, _ state: StreamStage.StreamState?, to lane: UInt8) {
        let parcel = Parcel(state)
        parcels.withLock { $0[stream] = parcel }
        changes.add(1, ordering: .sequentiallyConsistent)
        parkings[Int(lane)].wake()
    }

    /// The run was stopped: takers stop waiting.
    func wakeTakers() {
        changes.add(1, ordering: .sequentiallyConsistent)
        for parking in parkings { parking.wake() }
    }

    /// Lane `lane`'s thread: the state given for `stream`, waiting for it (nil if there was
    /// none, or once `second` is stopped).
    func take(_ stream: Int, lane: UInt8, unlessStopped second: SecondLane) -> StreamStage.StreamState? {
        while true {
            let seen = changes.load(ordering: .sequentiallyConsistent)
            if let parcel = parcels.withLock({ $0.removeValue(forKey: stream) }) { return parcel.state }
            if second.stopped { return nil }
            parkings[Int(lane)].wait { changes.load(ordering: .sequentiallyConsistent) != seen }
        }
    }
}
