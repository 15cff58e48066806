import Capture
import Dissection
import Pipeline
import Render
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The live capture being read, for the signal handlers.
nonisolated(unsafe) private var activeCapture: LiveCapture?

extension ProtoDissect {
    /// The default live filter: the ports of every protocol known, plus the user's filter.
    func liveFilter(_ registry: ProtocolRegistry) -> String {
        let ports = registry.assignedPorts.map { "tcp port \($0)" }.joined(separator: " or ")
        if let filter { return "(\(ports)) and (\(filter))" }
        return ports
    }

    func runLive(interface: String, registry: ProtocolRegistry, options: PipelineOptions, analysis: SpanningAnalysis?,
                 renderer: inout some Renderer, writer: OutputWriter) throws -> Int32 {
        let capture: LiveCapture
        do {
            capture = try LiveCapture(interface: interface, filter: liveFilter(registry))
        } catch let error as CaptureError {
            warn("\(error)")
            return ExitStatus.inputProblem
        }
        activeCapture = capture
        // Like tcpdump: say when the capture is armed (scripts and tests wait for this line).
        warn("listening on \(interface), filter '\(liveFilter(registry))'")
        let stop: @convention(c) (Int32) -> Void = { _ in activeCapture?.breakLoop() }
        signal(SIGINT, stop)
        signal(SIGTERM, stop)
        // A parent may have started us with these signals blocked (the mask is inherited): unblock them.
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
        let pipeline = Pipeline(registry: registry, options: options)
        var status = ExitStatus.success
        func emit(_ event: OutputEvent) -> Bool {
            analysis?.observeIfRead(event)
            renderer.render(event, into: &writer.sink)
            writer.eventDone()
            return true
        }
        do {
            if let writeFile {
                var source = RecordingSource(capture, writer: try PcapWriter(path: writeFile, linkType: capture.captureLinkType))
                try pipeline.run(&source, emit: emit)
            } else {
                var source = capture
                try pipeline.run(&source, emit: emit)
            }
        } catch {
            warn("\(error)")
            status = (error as? CaptureError)?.kind == .unwritable ? ExitStatus.outputProblem : ExitStatus.inputProblem
        }
        writer.flush()
        reportLimits(pipeline.statistics, source: interface)
        if let stats = capture.statistics() {
            warn("\(pipeline.statistics.packets) packets captured, \(stats.dropped) dropped by the kernel, \(pipeline.statistics.pdus) PDUs")
        }
        return status
    }
}
