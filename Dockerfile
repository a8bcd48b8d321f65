# The platform image: one program, any role (`serve --roles ...`).
FROM node:20-bookworm-slim
# Native add-ons (better-sqlite3, @discordjs/opus) build from source during install.
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
# The install script builds the resident PocketSphinx decoder when libpocketsphinx-dev is installed (it is not
# here: the image has no local STT), and says so otherwise.
COPY engines/stt/native ./engines/stt/native
# onnxruntime-node bundles its CPU binaries; its install script only downloads CUDA ones. npm 11 skips that script
# (package.json "allowScripts"); the npm 10 of this image reads the variable.
RUN ONNXRUNTIME_NODE_INSTALL=skip npm ci --omit=dev --no-audit --no-fund
COPY . .
ENV DATA_DIR=/data NODE_ENV=production
VOLUME /data
EXPOSE 8080 8081
ENTRYPOINT ["node", "bin/voiceagent.js"]
CMD ["serve"]
