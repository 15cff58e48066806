import Dissection
import Testing
import TestSupport

/// `IntTable` keeps each connection's state by stream number, removing as connections
/// close: it must answer as a dictionary does through any mix of inserts, updates and removals
/// (removal moves entries back into the hole, so probes must still find every key).
@Suite("Integer-keyed table")
struct IntTableTests {
    @Test("20,000 random inserts, updates and removals of 500 stream numbers, clustered and spread: a dictionary's answers")
    func sameAsDictionary() {
        var rng = SplitMix64(seed: 0x57AB)
        var table = IntTable<Int>()
        var reference: [Int: Int] = [:]
        for step in 0..<20_000 {
            // Small consecutive numbers (as streams are numbered) and large spread ones.
            let key = rng.next() % 2 == 0 ? Int(rng.next() % 300) : Int(rng.next() % 200) * 1_000_003
            switch rng.next() % 3 {
            case 0:
                #expect(table.removeValue(forKey: key) == reference.removeValue(forKey: key))
            case 1:
                table[key] = nil
                reference[key] = nil
            default:
                table[key] = step
                reference[key] = step
            }
            if step % 97 == 0 {
                for k in reference.keys { #expect(table[k] == reference[k]) }
            }
            #expect(table[key] == reference[key])
            #expect(table.count == reference.count)
        }
        for k in 0..<300 { #expect(table[k] == reference[k]) }
    }
}
