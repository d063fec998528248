import JSON
import Testing

@Suite struct JSONWriterTests {
    @Test func nestedObjectsGetTheirCommasAndTheOuterObjectKeepsCounting() {
        var json = JSONWriter()
        json.object { root in
            root.key("a")
            root.object { _ in }
            root.key("b")
            root.object { inner in
                inner.key("x")
                inner.int(-12)
                inner.key("y")
                inner.string("q\"\n")
            }
            root.key("c")
            root.int(7)
        }
        #expect(String(decoding: json.bytes, as: UTF8.self) == #"{"a":{},"b":{"x":-12,"y":"q\"\n"},"c":7}"#)
        #expect(JSONValue.parse(json.bytes)?.encoded() == json.bytes)
    }

    @Test func stringMembersGetTheirCommas() {
        var json = JSONWriter()
        json.object { root in
            root.member("a", "1")
            root.key("b")
            root.object { inner in inner.member("x", "\"") }
            root.member("c", "")
        }
        #expect(String(decoding: json.bytes, as: UTF8.self) == #"{"a":"1","b":{"x":"\""},"c":""}"#)
    }

    @Test(arguments: [0, 9, 10, -1, Int.max, Int.min])
    func integersAreDecimal(value: Int) {
        var json = JSONWriter()
        json.int(value)
        #expect(json.bytes == Array(String(value).utf8))
    }

    @Test func stringObjectsHaveSortedKeys() {
        var json = JSONWriter()
        json.object(["b": "2", "a": "1", "é": "3", "Z": "0"])
        #expect(json.bytes == JSONValue.object(["b": "2", "a": "1", "é": "3", "Z": "0"]).encoded())
    }
}
