// Linked with one layer's whole archive and only the layers below it (CMakeLists.txt): the link fails when
// the layer uses a symbol defined by a sibling or by a layer above it.
int main() { return 0; }
