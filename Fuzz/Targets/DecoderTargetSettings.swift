import Dissection

/// What the decoder targets' executables (fuzz-mqtt, fuzz-amqp) set once, before the first input.
///
/// `Field.buildsTextLines` and `DissectedPDU.buildsSummaries` are process-wide switches: while
/// they are on (the default) the decoders also write each field's text-tree line and each
/// PDU's one-line text summary, which are the text view's work, not decoding. The decoder
/// targets turn them off, as `proto-dissect --format json` does for lines (about a third more
/// inputs a second, docs/fuzzing.md); the views target leaves them on, so the code that writes
/// lines and summaries is fuzzed there. Only the executables set them: the regression tests
/// replay the same inputs in one process with other suites that need the defaults, and with the
/// switches on a decoder does all it does with them off, and more.
public enum DecoderTargetSettings {
    public static func apply() {
        Field.buildsTextLines = false
        DissectedPDU.buildsSummaries = false
    }
}
