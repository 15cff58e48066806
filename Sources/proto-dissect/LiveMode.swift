import Capture
import Dissection
import Pipeline
import Render
#if canImport(Glibc)
import Glibc
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

    func runLive(interface: String, registry: ProtocolRegistry, options: PipelineOptions,
                 renderer: inout any Renderer, writer: OutputWriter) throws -> Int32 {
        let capture: LiveCapture
        do {
            capture = try LiveCapture(interface: interface, filter: liveFilter(registry))
        } catch let error as CaptureError {
            warn("\(error)")
            return ExitStatus.inputProblem
        }
        activeCapture = capture
        let stop: @convention(c) (Int32) -> Void = { _ in activeCapture?.breakLoop() }
        signal(SIGINT, stop)
        signal(SIGTERM, stop)
        var source = capture
        let pipeline = Pipeline(registry: registry, options: options)
        var status = ExitStatus.success
        do {
            try pipeline.run(&source) { event in
                renderer.render(event, into: &writer.buffer)
                writer.eventDone()
                return true
            }
        } catch {
            warn("\(error)")
            status = ExitStatus.inputProblem
        }
        writer.flush()
        if let stats = capture.statistics() {
            warn("\(pipeline.statistics.packets) packets captured, \(stats.dropped) dropped by the kernel, \(pipeline.statistics.pdus) PDUs")
        }
        return status
    }
}
