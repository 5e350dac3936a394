"""Stage 4 of the pipeline: code generation (numpy reference backend; C follows)."""
