{
  "targets": [
    {
      "target_name": "sphinx_decoder",
      "sources": ["sphinx_decoder.c"],
      "cflags": ["<!@(pkg-config --cflags pocketsphinx sphinxbase)"],
      "libraries": ["<!@(pkg-config --libs pocketsphinx sphinxbase)"]
    }
  ]
}
