/// What turns output events into bytes, as the workers of a run use it
/// (`Pipeline.runInWorkers`): each worker has one and sees the events of its own connections,
/// in order; what a renderer sums (a table) is merged into one at the end. The renderers of
/// `Render` are these.
public protocol EventRenderer {
    /// Writes (or counts) one event.
    mutating func render(_ event: OutputEvent, into sink: inout ByteSink)
    /// The place, in the whole run's order, of the reassembly event whose output events come
    /// next: a renderer that keeps "the first N" of something (a table's rows) keeps them by it,
    /// so what it keeps does not depend on how connections were shared out.
    mutating func setPosition(_ position: Int)
    /// Takes in what `other` summed: the events of other connections, rendered by another worker.
    mutating func merge(_ other: Self)
}

extension EventRenderer {
    public mutating func setPosition(_ position: Int) {}
}
