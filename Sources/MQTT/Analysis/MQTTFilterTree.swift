/// The open subscriptions' topic filters that need matching (wildcards, `$share/`, `$`), as a
/// tree of their levels, so that a topic's matching subscriptions are counted by walking its
/// levels: the levels it names, `+` beside each, and the `#` ends on the way. A broker keeps its
/// subscriptions so (mosquitto's subscription tree); checking each filter in turn cost as many
/// matches as filters open, per topic, which a fleet of devices each subscribed to its own
/// `devices/ID/cmd/#` makes thousands (docs/performance.md).
///
/// Counts the same as `MQTTBroker.matches(filter:topic:)` summed over the filters, for any
/// filter, valid or not (a test checks it on random ones): `$share/NAME/` is left out first (a
/// `$share/NAME` with no slash after the name matches nothing); a filter whose first byte is `+`
/// or `#` matches no topic starting with `$`; a level that is `#` matches the rest of the topic
/// from there, and the parent level too when nothing follows it in the filter.
struct MQTTFilterTree {
    /// A level's bytes (compared as bytes, as the filter matching does, not as Unicode text).
    typealias Level = ArraySlice<UInt8>

    /// How many subscriptions one filter has: shared by the filter's place in the tree and
    /// `counters`, so that a filter already open (a fleet's devices all subscribing to one) is
    /// counted with one lookup, the tree left as it is.
    private final class Counter {
        /// The filter as first added: its bytes are where the counter is (another Unicode form
        /// of the same text finds it in `counters`, not in the tree).
        let filter: String
        var subscriptions = 0
        init(_ filter: String) { self.filter = filter }
    }

    private final class Node {
        var children: [Level: Node] = [:]
        var plus: Node?
        /// The filters that end at this level.
        var ending: [Counter] = []
        /// The filters whose next level is a last `#`: they match any topic that goes on past
        /// this level, and the topic that ends here (the parent level).
        var hash: [Counter] = []
        /// The filters whose next level is `#` with more after it (not a valid filter): they match
        /// a topic that goes on past this level, not one that ends here.
        var hashThenMore: [Counter] = []
        var isEmpty: Bool { children.isEmpty && plus == nil && ending.isEmpty && hash.isEmpty && hashThenMore.isEmpty }
    }

    /// The filters open, by their text: a filter equal as text to one open, in another Unicode
    /// form, counts as that one (as the exact filters' dictionary counts them).
    private var counters: [String: Counter] = [:]
    private let root = Node()
    /// The filters whose first byte is `+` or `#` (`+/b`, `#`, and `+a/b`, whose first level is
    /// a literal): they match no topic starting with `$` (MQTT 5.0 §4.7.2), so they have a root
    /// of their own, left out for such a topic.
    private let wildcardRoot = Node()

    private static let slash = UInt8(ascii: "/"), plusByte = UInt8(ascii: "+"), hashByte = UInt8(ascii: "#")

    /// The levels of a filter or topic: its bytes split at each `/` (empty levels kept).
    private static func levels(_ bytes: ArraySlice<UInt8>) -> [Level] {
        bytes.split(separator: slash, omittingEmptySubsequences: false)
    }

    /// `change` subscriptions more (or fewer) to `filter`; at none or fewer, the filter is let
    /// go (fewer to a filter not open changes nothing).
    mutating func add(_ change: Int, to filter: String) {
        guard change != 0 else { return }
        if let counter = counters[filter] {
            counter.subscriptions += change
            if counter.subscriptions <= 0 {
                counters[filter] = nil
                place(counter, adding: false)
            }
            return
        }
        guard change > 0 else { return }
        let counter = Counter(filter)
        counter.subscriptions = change
        counters[filter] = counter
        place(counter, adding: true)
    }

    /// Puts `counter` where its filter's levels lead, or takes it away (and the nodes left empty).
    private func place(_ counter: Counter, adding: Bool) {
        guard let whole = MQTTBroker.unshared(Array(counter.filter.utf8)[...]) else { return }
        func update(_ list: inout [Counter]) {
            if adding { list.append(counter) } else { list.removeAll { $0 === counter } }
        }
        var node = whole.first == Self.plusByte || whole.first == Self.hashByte ? wildcardRoot : root
        var path: [(parent: Node, level: Level?)] = []
        var levels = Self.levels(whole)[...]
        while let level = levels.popFirst() {
            if level.count == 1, level.first == Self.hashByte {
                if levels.isEmpty { update(&node.hash) } else { update(&node.hashThenMore) }
                if !adding { prune(path, from: node) }
                return
            }
            let isPlus = level.count == 1 && level.first == Self.plusByte
            let next: Node
            if isPlus {
                if let plus = node.plus { next = plus } else {
                    next = Node()
                    node.plus = next
                }
            } else if let child = node.children[level] {
                next = child
            } else {
                next = Node()
                node.children[level] = next
            }
            path.append((node, isPlus ? nil : level))
            node = next
        }
        update(&node.ending)
        if !adding { prune(path, from: node) }
    }

    /// Lets go of `node` and the nodes above it that hold nothing any more (a fleet's devices
    /// each subscribed to a filter of their own: memory stays that of the open ones).
    private func prune(_ path: [(parent: Node, level: Level?)], from node: Node) {
        var node = node
        for (parent, level) in path.reversed() {
            guard node.isEmpty else { return }
            if let level { parent.children[level] = nil } else { parent.plus = nil }
            node = parent
        }
    }

    /// Whether it holds no subscription, and no node left from one (for the tests).
    var isEmpty: Bool { counters.isEmpty && root.isEmpty && wildcardRoot.isEmpty }

    /// How many subscriptions match `topic`.
    func count(matching topic: String) -> Int {
        let bytes = Array(topic.utf8)
        let levels = Self.levels(bytes[...])[...]
        var total = count(root, levels)
        if bytes.first != UInt8(ascii: "$") { total += count(wildcardRoot, levels) }
        return total
    }

    private static func sum(_ list: [Counter]) -> Int { list.reduce(0) { $0 + $1.subscriptions } }

    /// Subscriptions under `node` matching the topic's remaining `levels`.
    private func count(_ node: Node, _ levels: ArraySlice<Level>) -> Int {
        // The topic ends here: the filters that end here, and those whose last level, next, is `#`.
        guard let level = levels.first else { return Self.sum(node.ending) + Self.sum(node.hash) }
        let rest = levels.dropFirst()
        // `#` next: the rest of the topic, from this level on.
        var total = Self.sum(node.hash) + Self.sum(node.hashThenMore)
        if let child = node.children[level] { total += count(child, rest) }
        if let plus = node.plus { total += count(plus, rest) }
        return total
    }
}
