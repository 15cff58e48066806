/// The pairs of `TCPReassembler`'s recently closed connections in the order of their close times:
/// a binary min-heap of (capture time, key). A sweep takes the pairs whose time is past from the
/// front, each in O(log n), where filtering the whole dictionary of closed pairs every second of
/// capture time cost in proportion to the connections closed within the idle timeout (a fleet
/// closes a thousand a second), every second.
///
/// A pair opened again, or closed again later, leaves its earlier entry here: the reassembler
/// lets a pair go only when its dictionary still holds that entry's time.
struct ClosedPairExpiry {
    private var heap: [(time: Double, key: FlowKey)] = []

    var count: Int { heap.count }

    mutating func add(_ key: FlowKey, closedAt time: Double) {
        heap.append((time, key))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].time < heap[parent].time else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes the entries whose time `isDue`, earliest first, handing each to `body`; stops at the
    /// first that is not (`isDue` must hold for every time before one it holds for).
    mutating func removeDue(_ isDue: (Double) -> Bool, _ body: (FlowKey, Double) -> Void) {
        while let first = heap.first, isDue(first.time) {
            body(first.key, first.time)
            let last = heap.removeLast()
            guard !heap.isEmpty else { return }
            heap[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1, right = left + 1
                var least = parent
                if left < heap.count, heap[left].time < heap[least].time { least = left }
                if right < heap.count, heap[right].time < heap[least].time { least = right }
                if least == parent { break }
                heap.swapAt(parent, least)
                parent = least
            }
        }
    }

    mutating func removeAll() {
        heap.removeAll(keepingCapacity: true)
    }
}
