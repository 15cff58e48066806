import Dissection

/// The text of a credential for `.secret`: the text when UTF-8, else hex.
func secretText(_ bytes: ArraySlice<UInt8>) -> String {
    Preview.validUTF8(bytes) ?? Preview.hex(bytes)
}

/// `'text'`-free rendering of topic names in summaries: empty names read `""`.
func summaryTopic(_ topic: String) -> String {
    topic.isEmpty ? "\"\"" : topic
}
