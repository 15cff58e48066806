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
