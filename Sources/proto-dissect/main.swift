print("proto-dissect")
