# Bookmarks web app with the embedded local model (SmolLM2-135M via llama.cpp).
# Build:  docker build -t bookmarks .
# Run:    docker run -p 7860:7860 -v bookmarks-data:/data bookmarks
# External model server instead of the embedded one:
#         docker run -p 7860:7860 -e BOOKMARKS_BASE_URL=http://vllm:8000/v1 \
#           -e BOOKMARKS_MODEL=Qwen/Qwen2.5-7B-Instruct -v bookmarks-data:/data bookmarks

# --- build stage: compile llama-cpp-python (portable AVX2 build) into wheels ---
FROM python:3.11-slim AS build
# The compiler toolchain lives only in this stage; the base image fixes the Debian release.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends build-essential cmake \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY pyproject.toml README.md ./
COPY bookmarks ./bookmarks
COPY ui ./ui
ENV CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DLLAVA_BUILD=OFF"
RUN pip wheel --no-cache-dir --wheel-dir /wheels ".[local]"

# --- runtime stage: slim, non-root, data on a volume ---
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    BOOKMARKS_DATA_DIR=/data \
    BOOKMARKS_STORIES=/app/stories \
    GRADIO_ANALYTICS_ENABLED=False
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir --no-index --find-links=/wheels "bookmarks[local]==0.1.0" \
    && rm -rf /wheels \
    && useradd --create-home --uid 10001 bookmarks \
    && mkdir -p /data \
    && chown bookmarks /data
WORKDIR /app
COPY app.py ./
COPY stories ./stories
USER 10001
VOLUME ["/data"]
EXPOSE 7860
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:7860/', timeout=4)"]
CMD ["python", "app.py", "--host", "0.0.0.0", "--port", "7860"]
