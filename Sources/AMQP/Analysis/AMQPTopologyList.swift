/// What the topology record lists of one kind (exchanges, queues, bindings): entries in the order
/// first seen, each found again by its key, at most `limit` of them; those past it are counted
/// (`notListed`), so that memory stays bounded however many a capture makes.
struct AMQPTopologyList<Key: Hashable, Entry> {
    let limit: Int
    private(set) var entries: [Entry] = []
    private var places: [Key: Int] = [:]
    /// Entries `set` found no room for.
    private(set) var notListed = 0

    init(limit: Int) { self.limit = limit }

    /// `entry` for `key`: in its place when `key` is listed, else at the end while there is
    /// room, else counted.
    mutating func set(_ key: Key, _ entry: Entry) {
        if let at = places[key] {
            entries[at] = entry
        } else if entries.count < limit {
            places[key] = entries.count
            entries.append(entry)
        } else {
            notListed += 1
        }
    }

    /// Changes the entry listed for `key`, if it is.
    mutating func update(_ key: Key, _ change: (inout Entry) -> Void) {
        if let at = places[key] { change(&entries[at]) }
    }

    func contains(_ key: Key) -> Bool { places[key] != nil }
}
