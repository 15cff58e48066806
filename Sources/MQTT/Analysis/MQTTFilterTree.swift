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

    private final class Node {
        var children: [Level: Node] = [:]
        var plus: Node?
        /// Subscriptions whose filter ends at this level.
        var ending = 0
        /// Subscriptions whose filter's next level is a last `#`: they match any topic that goes
        /// on past this level, and the topic that ends here (the parent level).
        var hash = 0
        /// Subscriptions whose filter's next level is `#` with more after it (not a valid filter):
        /// they match a topic that goes on past this level, not one that ends here.
        var hashThenMore = 0
        var isEmpty: Bool { children.isEmpty && plus == nil && ending == 0 && hash == 0 && hashThenMore == 0 }
    }

    private let root = Node()
    /// The filters whose first byte is `+` or `#` (`+/b`, `#`, and `+a/b`, whose first level is
    /// a literal): they match no topic starting with `$` (MQTT 5.0 §4.7.2), so they have a root
    /// of their own, left out for such a topic.
    private let wildcardRoot = Node()

    private static let slash = UInt8(ascii: "/"), plusByte = UInt8(ascii: "+"), hashByte = UInt8(ascii: "#")
    private static let share = Array("$share/".utf8)

    /// The levels of a filter or topic: its bytes split at each `/` (empty levels kept).
    private static func levels(_ bytes: ArraySlice<UInt8>) -> [Level] {
        bytes.split(separator: slash, omittingEmptySubsequences: false)
    }

    /// `change` subscriptions more (or fewer) to `filter`.
    mutating func add(_ change: Int, to filter: String) {
        guard change != 0 else { return }
        var whole = Array(filter.utf8)[...]
        // $share/NAME/filter: the filter after the name; with no slash after the name, nothing.
        if whole.count > Self.share.count, whole.starts(with: Self.share) {
            let rest = whole.dropFirst(Self.share.count)
            guard let cut = rest.firstIndex(of: Self.slash) else { return }
            whole = rest[(cut + 1)...]
        }
        var node = whole.first == Self.plusByte || whole.first == Self.hashByte ? wildcardRoot : root
        var path: [(parent: Node, level: Level?)] = []
        var levels = Self.levels(whole)[...]
        while let level = levels.popFirst() {
            if level.count == 1, level.first == Self.hashByte {
                if levels.isEmpty { node.hash += change } else { node.hashThenMore += change }
                prune(path, from: node)
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
        node.ending += change
        prune(path, from: node)
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
    var isEmpty: Bool { root.isEmpty && wildcardRoot.isEmpty }

    /// How many subscriptions match `topic`.
    func count(matching topic: String) -> Int {
        let bytes = Array(topic.utf8)
        let levels = Self.levels(bytes[...])[...]
        var total = count(root, levels)
        if bytes.first != UInt8(ascii: "$") { total += count(wildcardRoot, levels) }
        return total
    }

    /// Subscriptions under `node` matching the topic's remaining `levels`.
    private func count(_ node: Node, _ levels: ArraySlice<Level>) -> Int {
        // The topic ends here: the filters that end here, and those whose last level, next, is `#`.
        guard let level = levels.first else { return node.ending + node.hash }
        let rest = levels.dropFirst()
        // `#` next: the rest of the topic, from this level on.
        var total = node.hash + node.hashThenMore
        if let child = node.children[level] { total += count(child, rest) }
        if let plus = node.plus { total += count(plus, rest) }
        return total
    }
}
