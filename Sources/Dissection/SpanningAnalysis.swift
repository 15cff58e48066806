import Dissection

/// An analysis that spans connections: a broker model of subscriptions and deliveries, bindings
/// declared on one connection and used by another. It reads the events of every connection
/// merged in capture order, on the caller's thread, whatever the number of workers: the same
/// events in the same order as a run on one thread gives it.
///
/// Given to `Pipeline.runInWorkers` (with one worker, a run on one thread). Each worker asks
/// `reads` of the events it makes, so only the events the analysis reads cross between threads.
/// What it finds comes out after the PDUs, when the run ends (`finish`).
public protocol SpanningAnalysis: AnyObject, Sendable {
    /// Whether the analysis reads `event`; asked on the worker that made the event, so it must
    /// depend on the event alone.
    func reads(_ event: OutputEvent) -> Bool
    /// Every event `reads` kept, of every connection, in capture order, on the caller's thread.
    func observe(_ event: OutputEvent)
    /// The run is over (every capture read): the records of what was found, one at a time.
    func finish(record: (AnalysisRecord) -> Void)
}

extension SpanningAnalysis {
    public func finish(record: (AnalysisRecord) -> Void) {}
}

/// Several spanning analyses as one: each is handed the events it reads, and finishes in turn.
// Unchecked: its analyses are Sendable, and the list is fixed when it is made.
public final class SpanningAnalyses: SpanningAnalysis, @unchecked Sendable {
    public let analyses: [SpanningAnalysis]

    public init(_ analyses: [SpanningAnalysis]) { self.analyses = analyses }

    public func reads(_ event: OutputEvent) -> Bool {
        analyses.contains { $0.reads(event) }
    }

    public func observe(_ event: OutputEvent) {
        for a in analyses where a.reads(event) { a.observe(event) }
    }

    public func finish(record: (AnalysisRecord) -> Void) {
        for a in analyses { a.finish(record: record) }
    }
}
