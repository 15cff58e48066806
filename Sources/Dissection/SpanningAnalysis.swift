/// An analysis that spans connections: a broker model of subscriptions and deliveries, bindings
/// declared on one connection and used by another. It reads the events of every connection
/// merged in capture order, on the caller's thread, whatever the number of workers: the same
/// events in the same order as a run on one thread gives it.
///
/// Given to `Pipeline.runInWorkers` (with one worker, a run on one thread). Each worker asks
/// `forwarded` of the events it makes, so only what the analysis reads crosses between threads.
/// What it finds comes out after the PDUs, when the run ends (`finish`).
public protocol SpanningAnalysis: AnyObject, Sendable {
    /// Whether the analysis reads `event`; asked on the worker that made the event, so it must
    /// depend on the event alone.
    func reads(_ event: OutputEvent) -> Bool
    /// What of `event` crosses to the caller's thread, asked on the worker that made it: nil if
    /// the analysis does not read it, else the event or a smaller one carrying what the analysis
    /// reads of it, which `reads` keeps and `observe` makes the same of. A PDU event held until
    /// the caller's thread reaches it holds its PDU and the packet bytes that PDU points into;
    /// a smaller event lets them go at once. The event itself unless told.
    func forwarded(_ event: OutputEvent) -> OutputEvent?
    /// Every event `reads` kept, of every connection, in capture order, on the caller's thread
    /// (from another worker, as `forwarded` made it).
    func observe(_ event: OutputEvent)
    /// `observe` of `event` if `reads` keeps it: what the caller's thread asks of each event. (A
    /// composite asks each of its analyses once: asked `reads`, then `observe`, it asked twice.)
    func observeIfRead(_ event: OutputEvent)
    /// The run is over (every capture read): the records of what was found, one at a time.
    func finish(record: (AnalysisRecord) -> Void)
}

extension SpanningAnalysis {
    public func finish(record: (AnalysisRecord) -> Void) {}

    public func forwarded(_ event: OutputEvent) -> OutputEvent? { reads(event) ? event : nil }

    public func observeIfRead(_ event: OutputEvent) {
        if reads(event) { observe(event) }
    }
}

/// Several spanning analyses as one: each is handed the events it reads, and finishes in turn.
// Unchecked: its analyses are Sendable, and the list is fixed when it is made.
public final class SpanningAnalyses: SpanningAnalysis, @unchecked Sendable {
    public let analyses: [SpanningAnalysis]

    /// The first three analyses as properties of their own, the others in a list: each is asked
    /// of every event, and one read out of the list was retained and released for the call
    /// (atomic writes, on objects a run in workers reaches from two threads), where a `let`
    /// property is read in place.
    private let first: SpanningAnalysis?, second: SpanningAnalysis?, third: SpanningAnalysis?
    private let others: [SpanningAnalysis]

    public init(_ analyses: [SpanningAnalysis]) {
        self.analyses = analyses
        first = analyses.first
        second = analyses.count > 1 ? analyses[1] : nil
        third = analyses.count > 2 ? analyses[2] : nil
        others = Array(analyses.dropFirst(3))
    }

    public func reads(_ event: OutputEvent) -> Bool {
        first?.reads(event) == true || second?.reads(event) == true || third?.reads(event) == true
            || others.contains { $0.reads(event) }
    }

    /// The event as the one analysis that reads it makes it, the event itself when several read
    /// it. (The smaller event must be read by no other analysis: one that did would see it from
    /// another worker and not on one thread. None does: the clients' analysis reads no counted run.)
    ///
    /// Asked on the workers, of every event: the analyses are asked through their `let`
    /// properties, as `observe` asks them on the caller's thread. Read out of the list, each was
    /// retained and released per event on both threads at once, its reference count's cache line
    /// going back and forth between the cores.
    public func forwarded(_ event: OutputEvent) -> OutputEvent? {
        let inFirst = first?.reads(event) == true, inSecond = second?.reads(event) == true
        let inThird = third?.reads(event) == true
        var readers = (inFirst ? 1 : 0) + (inSecond ? 1 : 0) + (inThird ? 1 : 0)
        var other: SpanningAnalysis?
        for a in others where a.reads(event) {
            readers += 1
            other = a
        }
        if readers != 1 { return readers == 0 ? nil : event }
        if inFirst { return first?.forwarded(event) }
        if inSecond { return second?.forwarded(event) }
        if inThird { return third?.forwarded(event) }
        return other?.forwarded(event)
    }

    public func observe(_ event: OutputEvent) {
        if first?.reads(event) == true { first?.observe(event) }
        if second?.reads(event) == true { second?.observe(event) }
        if third?.reads(event) == true { third?.observe(event) }
        for a in others where a.reads(event) { a.observe(event) }
    }

    public func observeIfRead(_ event: OutputEvent) {
        observe(event)
    }

    public func finish(record: (AnalysisRecord) -> Void) {
        for a in analyses { a.finish(record: record) }
    }
}
