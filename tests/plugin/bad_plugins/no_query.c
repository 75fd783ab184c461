/* A valid shared object that is not a Tessera plugin: it exports no tessera_plugin_query. */
__attribute__((visibility("default"))) int tessera_test_not_a_plugin(void) { return 42; }
