import Dissection

/// The renderers' name for the JSON string escaping that lives in `Dissection` (the text tree,
/// which decoders may write too, quotes its previews the same way).
typealias JSON = JSONString
