"""The Gradio web app: layout and thin handlers; all logic lives in `bookmarks/`."""
