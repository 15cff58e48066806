/// The bindings the broker model holds now, indexed as routing and the topology's changes ask for
/// them: by source exchange (in the order they were made), by routing key (direct), by word
/// (topic, a tree of the binding keys' words as RabbitMQ's topic exchange keeps them), by
/// destination and by identity. A list searched per publish, declare or delete cost as much as
/// the bindings open; a capture of thousands of clients, each binding a queue of its own to
/// `amq.topic`, made it thousands of topic matches per publish (docs/performance.md).
///
/// Each binding has a number, given in the order they were made (a binding made again after its
/// removal gets a new one): routing visits a source's matching bindings in that order, which an
/// alternate exchange's use can depend on (`AMQPBroker.route`).
struct AMQPBindingIndex {
    typealias Binding = AMQPBrokerEvent.Binding

    private(set) var bindings: [Int: Binding] = [:]
    private var nextID = 0
    private var sources: [String: Source] = [:]
    private var byDestination: [String: [Int]] = [:]
    private var byIdentity: [String: [Int]] = [:]

    /// One source exchange's bindings (a class: changed in place, never copied out of the dictionary).
    private final class Source {
        /// In the order made; some may have been removed since (`dead` of them), dropped once they
        /// are as many as the others.
        var ids: [Int] = []
        var dead = 0
        var byKey: [String: [Int]] = [:]
        var topics = TopicNode()
    }

    /// A node of the binding keys' word tree: `*` and `#` are children like any word, followed as
    /// RabbitMQ matches them (`count`).
    private final class TopicNode {
        var children: [String: TopicNode] = [:]
        /// The bindings whose key ends here.
        var ids: Set<Int> = []
        var isEmpty: Bool { children.isEmpty && ids.isEmpty }
    }

    /// The words of a topic key or binding key, as `AMQPBroker.topicMatches` splits them.
    private static func words(_ key: String) -> [String] {
        key.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    }

    private static func destinationKey(_ b: Binding) -> String { (b.toExchange ? "e\u{0}" : "q\u{0}") + b.destination }

    /// A binding's identity without its arguments (which `same` compares).
    private static func identityKey(_ b: Binding) -> String {
        [b.source, b.destination, b.toExchange ? "e" : "q", b.routingKey].joined(separator: "\u{0}")
    }

    /// The numbers of the bindings held that are `same` as `binding`, in the order made.
    func matching(_ binding: Binding, same: (Binding, Binding) -> Bool) -> [Int] {
        (byIdentity[Self.identityKey(binding)] ?? []).filter { same(bindings[$0]!, binding) }
    }

    /// Holds `binding`; its number.
    @discardableResult
    mutating func add(_ binding: Binding) -> Int {
        let id = nextID
        nextID += 1
        bindings[id] = binding
        let source: Source
        if let known = sources[binding.source] { source = known } else {
            source = Source()
            sources[binding.source] = source
        }
        source.ids.append(id)
        source.byKey[binding.routingKey, default: []].append(id)
        var node = source.topics
        for word in Self.words(binding.routingKey) {
            if let child = node.children[word] { node = child } else {
                let child = TopicNode()
                node.children[word] = child
                node = child
            }
        }
        node.ids.insert(id)
        byDestination[Self.destinationKey(binding), default: []].append(id)
        byIdentity[Self.identityKey(binding), default: []].append(id)
        return id
    }

    /// Lets binding `id` go.
    mutating func remove(_ id: Int) {
        guard let binding = bindings.removeValue(forKey: id) else { return }
        if let source = sources[binding.source] {
            source.dead += 1
            if source.dead * 2 > source.ids.count {
                source.ids.removeAll { bindings[$0] == nil }
                source.dead = 0
            }
            Self.drop(id, at: binding.routingKey, in: &source.byKey)
            var path: [(TopicNode, String)] = []
            var node: TopicNode? = source.topics
            for word in Self.words(binding.routingKey) {
                guard let current = node else { break }
                path.append((current, word))
                node = current.children[word]
            }
            if let node {
                node.ids.remove(id)
                var child = node
                for (parent, word) in path.reversed() {
                    guard child.isEmpty else { break }
                    parent.children[word] = nil
                    child = parent
                }
            }
            if source.ids.isEmpty { sources[binding.source] = nil }
        }
        Self.drop(id, at: Self.destinationKey(binding), in: &byDestination)
        Self.drop(id, at: Self.identityKey(binding), in: &byIdentity)
    }

    private static func drop(_ id: Int, at key: String, in lists: inout [String: [Int]]) {
        // In place: a list copied out and written back is copied whole.
        guard let at = lists[key]?.firstIndex(of: id) else { return }
        lists[key]?.remove(at: at)
        if lists[key]?.isEmpty == true { lists[key] = nil }
    }

    /// The numbers of the bindings with `name` as their source, in the order made.
    func from(_ name: String) -> [Int] {
        guard let source = sources[name] else { return [] }
        return source.dead == 0 ? source.ids : source.ids.filter { bindings[$0] != nil }
    }

    /// The numbers of `name`'s bindings with exactly `routingKey` (direct), in the order made.
    func from(_ name: String, key routingKey: String) -> [Int] {
        sources[name]?.byKey[routingKey] ?? []
    }

    /// The numbers of `name`'s bindings whose key matches `routingKey` as a topic exchange
    /// matches (`*` one word, `#` zero or more), in the order made.
    func from(_ name: String, topic routingKey: String) -> [Int] {
        guard let source = sources[name] else { return [] }
        var found: Set<Int> = []
        Self.collect(source.topics, Self.words(routingKey)[...], into: &found)
        return found.sorted()
    }

    private static func collect(_ node: TopicNode, _ words: ArraySlice<String>, into found: inout Set<Int>) {
        // `#` takes none of the words left, or one more at a time.
        if let hash = node.children["#"] {
            var rest = words
            while true {
                collect(hash, rest, into: &found)
                guard !rest.isEmpty else { break }
                rest = rest.dropFirst()
            }
        }
        guard let word = words.first else {
            found.formUnion(node.ids)
            return
        }
        let rest = words.dropFirst()
        if let child = node.children[word] { collect(child, rest, into: &found) }
        if word != "*", let star = node.children["*"] { collect(star, rest, into: &found) }
    }

    /// The numbers of the bindings to queue or exchange `name`, in the order made.
    func to(_ name: String, exchange: Bool) -> [Int] {
        byDestination[(exchange ? "e\u{0}" : "q\u{0}") + name] ?? []
    }
}
